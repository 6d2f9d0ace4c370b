// Callbacks: the function types a user of muon::net hands to TcpServer,
// TcpClient and TcpConnection. Every callback runs in the loop thread that
// owns the connection (see docs/net.md for the threading model).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "muon/base/Timestamp.h"

namespace muon {
namespace net {

class Buffer;
class TcpConnection;

using TcpConnectionPtr = std::shared_ptr<TcpConnection>;
using TimerCallback = std::function<void()>;
// Called when a connection comes up and again when it goes down
// (conn->connected() tells which).
using ConnectionCallback = std::function<void(const TcpConnectionPtr&)>;
using CloseCallback = std::function<void(const TcpConnectionPtr&)>;
// Called when the output buffer has been written out completely.
using WriteCompleteCallback = std::function<void(const TcpConnectionPtr&)>;
// Called once each time the output buffer grows across the high-water mark;
// the second argument is the buffer's size at that moment.
using HighWaterMarkCallback = std::function<void(const TcpConnectionPtr&, size_t)>;
// A TcpClient's attempt to connect failed; the argument is the errno
// (ECONNREFUSED, ETIMEDOUT, ENETUNREACH...). See TcpClient.h.
using ConnectFailureCallback = std::function<void(int savedErrno)>;
// A connection's security layer (TLS) refused the peer or was refused, or
// the handshake timed out, before the connection came up; `reason` says
// why ("certificate verify failed: certificate has expired"). The
// connection callback is not called for such a connection: it never was up.
// One exception: with TLS 1.3 a client's side of the handshake is done
// before the server has checked the client's certificate, so a server that
// refuses it ("tlsv13 alert certificate required") does so on a connection
// that is up: this callback runs, then the connection callback (down).
// Without one set, the connection logs the reason as a warning.
using HandshakeFailureCallback = std::function<void(const TcpConnectionPtr&, const std::string& reason)>;
// Data arrived; it is in *buf (consume it with buf->retrieve*). receiveTime
// is when poll returned, on the wall clock.
using MessageCallback = std::function<void(const TcpConnectionPtr&, Buffer*, Timestamp)>;

// Defaults used when the user sets none: log at TRACE / discard the data.
void defaultConnectionCallback(const TcpConnectionPtr& conn);
void defaultMessageCallback(const TcpConnectionPtr& conn, Buffer* buffer, Timestamp receiveTime);

}  // namespace net
}  // namespace muon
