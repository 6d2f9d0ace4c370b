// TcpClient: connects to one server and owns at most one TcpConnection at a
// time, with optional reconnection (enableRetry).
//
// connect(), disconnect(), stop() are safe from any thread. Destroy a
// TcpClient in its loop's thread, or from another thread once it is idle
// (not connecting: stop() it and wait for the disconnect callback): its
// connector and connection run callbacks on the loop thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "muon/net/Callbacks.h"
#include "muon/net/InetAddress.h"

namespace muon {
namespace net {

class Connector;
class EventLoop;
class TransportLayer;

class TcpClient {
 public:
  TcpClient(EventLoop* loop, const InetAddress& serverAddr, const std::string& name);
  ~TcpClient();
  TcpClient(const TcpClient&) = delete;
  TcpClient& operator=(const TcpClient&) = delete;

  // Starts connecting; failed attempts are retried with exponential back-off
  // (initial delay 500 ms, doubling, capped at 30 s) until connected or stop().
  // An attempt the server does not answer fails after the connect timeout
  // (30 s). Each failure is reported to the connect-failure callback.
  // Does nothing while connected; after a disconnect it connects again
  // (called while disconnect() is still closing the connection, it connects
  // once that connection is gone).
  void connect();
  // Half-closes the current connection (TcpConnection::shutdown).
  void disconnect();
  // Stops connecting (also while an attempt is in flight or a retry is
  // scheduled). Does not touch an established connection.
  void stop();

  TcpConnectionPtr connection() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return connection_;
  }
  EventLoop* getLoop() const { return loop_; }
  // Reconnect after an established connection goes down.
  bool retry() const { return retry_; }
  void enableRetry() { retry_ = true; }
  // The back-off: first delay and cap, in milliseconds. Before connect().
  void setRetryDelayMs(int initialMs, int maxMs = 30 * 1000);
  // How long one attempt may wait for the server's answer before it fails
  // with ETIMEDOUT and is retried; default 30 s, 0 for the kernel's own
  // limit (about two minutes). Before connect().
  void setConnectTimeoutMs(int ms);
  const std::string& name() const { return name_; }
  const InetAddress& serverAddress() const;

  // Not thread-safe: set them before connect().
  void setConnectionCallback(ConnectionCallback cb) { connectionCallback_ = std::move(cb); }
  void setMessageCallback(MessageCallback cb) { messageCallback_ = std::move(cb); }
  void setWriteCompleteCallback(WriteCompleteCallback cb) { writeCompleteCallback_ = std::move(cb); }
  // The connection's transport is made by `layer` (TLS: a client
  // muon::net::TlsContext). Before connect().
  void setTransportLayer(std::shared_ptr<TransportLayer> layer) { layer_ = std::move(layer); }
  // The layer's handshake failed (TLS: the server is not trusted, or does
  // not trust us); the connection closes without a connection callback,
  // and, with enableRetry(), the client connects again after the back-off.
  void setHandshakeFailureCallback(HandshakeFailureCallback cb) {
    handshakeFailureCallback_ = std::move(cb);
  }
  // Called in the loop thread after each failed attempt, with its errno:
  // ECONNREFUSED (nothing listens), ETIMEDOUT (no answer within the connect
  // timeout), ENETUNREACH, EHOSTUNREACH, EMFILE (no socket to try with)...
  // Attempts go on with the back-off, whether or not enableRetry() was
  // called; stop() in the callback ends them, connect() in it tries again
  // at once. After an error retrying cannot help (EACCES, EPERM,
  // EAFNOSUPPORT) the client has given up before the call. Not called once
  // stop() was called, nor after the client is destroyed (as the top of this
  // file says: in the loop thread, or from another once it is idle).
  void setConnectFailureCallback(ConnectFailureCallback cb);

 private:
  void newConnection(int sockfd);
  void removeConnection(const TcpConnectionPtr& conn);

  EventLoop* const loop_;
  std::shared_ptr<Connector> connector_;
  const std::string name_;
  ConnectionCallback connectionCallback_;
  MessageCallback messageCallback_;
  WriteCompleteCallback writeCompleteCallback_;
  std::shared_ptr<TransportLayer> layer_;
  HandshakeFailureCallback handshakeFailureCallback_;
  std::atomic<bool> retry_;
  std::atomic<bool> connect_;
  std::atomic<bool> reconnectWhenClosed_;  // connect() came during disconnect()'s close
  int nextConnId_;  // loop thread only
  mutable std::mutex mutex_;
  TcpConnectionPtr connection_;  // guarded by mutex_
};

}  // namespace net
}  // namespace muon
