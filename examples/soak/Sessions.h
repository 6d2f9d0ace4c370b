// Sessions: the soak's pingpong clients, spread round robin over their own
// I/O loops. Each session sends one block when it connects, echoes back
// whatever it reads, and reconnects at once when the server closes it.
//
// Construct, connectAll(), stopAll() and destroy in the base loop's thread;
// connected() from any thread. Destroy only after stopAll's callback ran:
// the TcpClients are idle then, so they may die outside their loops.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "muon/net/EventLoopThreadPool.h"

namespace muon {
namespace net {
class EventLoop;
class InetAddress;
}  // namespace net
}  // namespace muon

namespace soak {

class Sessions {
 public:
  Sessions(muon::net::EventLoop* baseLoop, const muon::net::InetAddress& server, int threads,
           int count, size_t blockSize);
  ~Sessions();
  Sessions(const Sessions&) = delete;
  Sessions& operator=(const Sessions&) = delete;

  void connectAll();
  // Sessions whose connection is up right now.
  int connected() const { return connected_.load(std::memory_order_relaxed); }
  // Stops reconnecting and half-closes every session; `done` runs in the
  // base loop once every session is closed (or was never connected).
  void stopAll(std::function<void()> done);

 private:
  class Session;

  void sessionUp() { connected_.fetch_add(1, std::memory_order_relaxed); }
  void sessionDown() { connected_.fetch_sub(1, std::memory_order_relaxed); }
  // From a session's loop, once its TcpClient is idle.
  void sessionStopped();

  muon::net::EventLoop* const baseLoop_;
  const std::string block_;
  // Declared before sessions_: the loops must outlive the TcpClients.
  muon::net::EventLoopThreadPool threadPool_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::atomic<int> connected_{0};
  std::atomic<int> running_{0};    // sessions not yet stopped, after stopAll()
  std::function<void()> stopped_;  // set before stopAll() queues any stop
};

}  // namespace soak
