// TcpServer: accepts TCP connections and hands each to an I/O loop.
//
// The acceptor runs in `loop` (the base loop); with setThreadNum(n > 0) each
// connection goes, round robin, to one of n EventLoopThreads, else it stays
// in the base loop. Construct, set the callbacks and call start() in the
// base loop's thread (start() itself is safe from any thread). Destroy it in
// the base loop's thread while that loop still exists; connections still
// open are closed (their disconnect callbacks run in their own loops).
//
// The listening socket is bound in the constructor, so listenAddress()
// gives the real port at once, even when constructed with port 0.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "muon/net/Callbacks.h"
#include "muon/net/InetAddress.h"

namespace muon {
namespace net {

class Acceptor;
class EventLoop;
class EventLoopThreadPool;
class TransportLayer;

class TcpServer {
 public:
  using ThreadInitCallback = std::function<void(EventLoop*)>;
  enum Option { kNoReusePort, kReusePort };

  TcpServer(EventLoop* loop, const InetAddress& listenAddr, const std::string& name,
            Option option = kNoReusePort);
  ~TcpServer();
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  // "ip:port" of listenAddress(): the real port, also when asked for port 0.
  const std::string& ipPort() const { return ipPort_; }
  const std::string& name() const { return name_; }
  EventLoop* getLoop() const { return loop_; }
  // The bound address, read back with getsockname (the real port for port 0).
  const InetAddress& listenAddress() const { return listenAddr_; }

  // Number of I/O threads: 0 (default) serves every connection in the base
  // loop; n > 0 adds n threads. Call before start().
  void setThreadNum(int numThreads);
  // Runs in each I/O loop's thread before it starts looping (with 0 threads,
  // in the base loop's thread before the first connection). Set it before
  // start().
  void setThreadInitCallback(ThreadInitCallback cb) { threadInitCallback_ = std::move(cb); }
  // Valid after start().
  std::shared_ptr<EventLoopThreadPool> threadPool() { return threadPool_; }

  // Starts the threads and listens. Idempotent and safe from any thread:
  // when it returns, connect() to listenAddress() succeeds.
  void start();

  // Not thread-safe: set them before start().
  void setConnectionCallback(ConnectionCallback cb) { connectionCallback_ = std::move(cb); }
  void setMessageCallback(MessageCallback cb) { messageCallback_ = std::move(cb); }
  void setWriteCompleteCallback(WriteCompleteCallback cb) { writeCompleteCallback_ = std::move(cb); }
  // Every connection's transport is made by `layer` (TLS: a server
  // muon::net::TlsContext), so one call encrypts them all. Set before
  // start(). The layer is shared: the connections keep it alive.
  void setTransportLayer(std::shared_ptr<TransportLayer> layer) { layer_ = std::move(layer); }
  void setHandshakeFailureCallback(HandshakeFailureCallback cb) {
    handshakeFailureCallback_ = std::move(cb);
  }
  // Every new connection's input limit (TcpConnection::setInputLimitCallback).
  // Set before start().
  void setInputLimitCallback(HighWaterMarkCallback cb, size_t limit) {
    inputLimitCallback_ = std::move(cb);
    inputLimit_ = limit;
  }

  // Number of connections not yet removed (base loop thread only).
  size_t numConnections() const { return connections_.size(); }

 private:
  void newConnection(int sockfd, const InetAddress& peerAddr);
  void removeConnectionInLoop(const TcpConnectionPtr& conn);

  EventLoop* const loop_;
  std::string ipPort_;  // of listenAddr_; set in the constructor
  const std::string name_;
  std::unique_ptr<Acceptor> acceptor_;
  const InetAddress listenAddr_;
  std::shared_ptr<EventLoopThreadPool> threadPool_;
  ConnectionCallback connectionCallback_;
  std::shared_ptr<TransportLayer> layer_;
  HandshakeFailureCallback handshakeFailureCallback_;
  HighWaterMarkCallback inputLimitCallback_;
  size_t inputLimit_ = 0;
  MessageCallback messageCallback_;
  WriteCompleteCallback writeCompleteCallback_;
  ThreadInitCallback threadInitCallback_;
  std::once_flag started_;
  int nextConnId_;  // base loop thread only
  std::unordered_map<std::string, TcpConnectionPtr> connections_;  // base loop thread only
  // Expires when the server is destroyed; a connection closing in an I/O
  // thread checks it before touching the server, which may be gone.
  std::shared_ptr<int> alive_;
};

}  // namespace net
}  // namespace muon
