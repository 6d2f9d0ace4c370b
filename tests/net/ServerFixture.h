// A TcpServer running in its own base-loop thread, for tests that drive it
// from the test thread with blocking sockets.
#pragma once

#include <memory>
#include <string>

#include "NetTestUtil.h"
#include "muon/net/EventLoopThread.h"
#include "muon/net/TcpServer.h"

namespace muon {
namespace net {
namespace test {

class ServerThread {
 public:
  // configure runs in the loop thread, before start().
  template <typename Configure>
  ServerThread(int ioThreads, Configure configure, bool ipv6 = false, uint16_t port = 0,
               TcpServer::Option option = TcpServer::kNoReusePort)
      : loop_(loopThread_.startLoop()) {
    runSync(loop_, [&] {
      server_ = std::make_unique<TcpServer>(loop_, loopback(port, ipv6), "test", option);
      server_->setThreadNum(ioThreads);
      configure(*server_);
      server_->start();
    });
  }
  ~ServerThread() {
    runSync(loop_, [this] { server_.reset(); });
  }

  EventLoop* loop() const { return loop_; }
  TcpServer& server() { return *server_; }
  InetAddress address() const { return server_->listenAddress(); }
  size_t numConnections() {
    return runSync(loop_, [this] { return server_->numConnections(); });
  }

 private:
  EventLoopThread loopThread_;
  EventLoop* loop_;
  std::unique_ptr<TcpServer> server_;
};

}  // namespace test
}  // namespace net
}  // namespace muon
