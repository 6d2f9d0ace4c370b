// EchoServer: the soak's pingpong server. Echoes every byte, logs one line
// per kLogEvery messages and one per connection event, and on request closes
// its oldest connections (the churn that would show an fd or memory leak).
//
// Construct, start() and destroy in the base loop's thread; churn() and
// connections() there too. The counters are readable from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "muon/net/Callbacks.h"
#include "muon/net/TcpServer.h"

namespace soak {

class EchoServer {
 public:
  // One line per this many messages (message callbacks), summed over all
  // connections: enough to make the log a real load and roll its files.
  static constexpr uint64_t kLogEvery = 5;

  // Listens on 127.0.0.1 at a port the kernel picks; `threads` I/O loops.
  EchoServer(muon::net::EventLoop* loop, int threads);
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;

  void start() { server_.start(); }
  const muon::net::InetAddress& address() const { return server_.listenAddress(); }

  // Closes the `count` oldest connections, alternately with shutdown() (the
  // peer sees EOF) and forceClose() (unread input: the peer sees a reset).
  // Returns how many it closed.
  int churn(int count);
  // Connections the TcpServer still holds (closed ones not yet removed count).
  size_t connections() const { return server_.numConnections(); }

  uint64_t bytesEchoed() const { return bytes_.load(std::memory_order_relaxed); }
  uint64_t closedByChurn() const { return churned_.load(std::memory_order_relaxed); }

 private:
  void onConnection(const muon::net::TcpConnectionPtr& conn);
  void onMessage(const muon::net::TcpConnectionPtr& conn, muon::net::Buffer* buf);

  muon::net::TcpServer server_;
  std::mutex mutex_;  // onConnection runs in the I/O threads, churn() in the base loop
  // Oldest first. Weak, so the server alone decides when a connection dies;
  // an entry keeps only the control block (and, made by make_shared, the
  // object's own bytes) until churn() pops it.
  std::deque<std::weak_ptr<muon::net::TcpConnection>> byAge_;  // guarded by mutex_
  bool forceNext_ = false;                                     // base loop only
  std::atomic<uint64_t> messages_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> churned_{0};
};

}  // namespace soak
