// LengthHeaderCodec: the chat protocol of the book's §7.3. Each message is
// a 4-byte big-endian length followed by that many bytes.
//
// onMessage() is a TcpConnection message callback: it cuts the input into
// whole messages, hands each to the callback and leaves a partial one in the
// buffer for the next read. A length outside [0, kMaxMessageLength] means
// the peer does not speak the protocol: the connection is closed.
//
// Stateless apart from the callback, so one codec serves every connection
// and every thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "muon/base/Logging.h"
#include "muon/base/Timestamp.h"
#include "muon/net/Buffer.h"
#include "muon/net/TcpConnection.h"

namespace chat {

class LengthHeaderCodec {
 public:
  using StringMessageCallback =
      std::function<void(const muon::net::TcpConnectionPtr&, const std::string&, muon::Timestamp)>;

  static constexpr int32_t kMaxMessageLength = 64 * 1024;
  static constexpr size_t kHeaderLength = sizeof(int32_t);

  explicit LengthHeaderCodec(StringMessageCallback cb) : messageCallback_(std::move(cb)) {}

  void onMessage(const muon::net::TcpConnectionPtr& conn, muon::net::Buffer* buf,
                 muon::Timestamp receiveTime) const {
    while (buf->readableBytes() >= kHeaderLength) {
      const int32_t len = buf->peekInt32();
      if (len < 0 || len > kMaxMessageLength) {
        LOG_ERROR << "chat: invalid length " << len << " from " << conn->peerAddress().toIpPort();
        buf->retrieveAll();
        conn->forceClose();
        return;
      }
      const size_t total = kHeaderLength + static_cast<size_t>(len);
      if (buf->readableBytes() < total) return;  // the rest has not arrived
      buf->retrieve(kHeaderLength);
      std::string message = buf->retrieveAsString(static_cast<size_t>(len));
      messageCallback_(conn, message, receiveTime);
    }
  }

  // The framed message; safe from any thread (TcpConnection::send is).
  static void send(const muon::net::TcpConnectionPtr& conn, std::string_view message) {
    muon::net::Buffer buf;
    buf.append(message);
    buf.prependInt32(static_cast<int32_t>(message.size()));
    conn->send(&buf);
  }

 private:
  const StringMessageCallback messageCallback_;
};

}  // namespace chat
