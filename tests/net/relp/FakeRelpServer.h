// A RELP server for tests that misbehaves on purpose: it listens on a
// loopback port of its own (port 0), takes one connection at a time on its
// own thread, and hands each to the test's Session function with a Peer to
// read the client's frames and write whatever bytes it likes. For tests only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "muon/net/relp/RelpFrame.h"
#include "muon/net/relp/RelpParser.h"

namespace muon {
namespace net {
namespace test {

class FakeRelpServer {
 public:
  // One accepted connection, seen from the server.
  class Peer {
   public:
    Peer(int fd, const std::atomic<bool>& stopping) : fd_(fd), stopping_(stopping), parser_(1 << 20) {}
    // The client's next frame; false when the connection ends, the bytes
    // are not RELP, the server stops or `timeout` passes.
    bool next(relp::RelpFrameData* frame,
              std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      for (;;) {
        if (!pending_.empty()) {
          size_t consumed = 0;
          auto status = parser_.parse(pending_.data(), pending_.size(), &consumed);
          pending_.erase(0, consumed);
          if (status == relp::RelpParser::Status::kFrame) {
            *frame = parser_.frame();
            return true;
          }
          if (status == relp::RelpParser::Status::kError) return false;
        }
        if (stopping_ || std::chrono::steady_clock::now() > deadline) return false;
        struct pollfd p = {fd_, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        char buf[65536];
        ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) return false;
        pending_.append(buf, static_cast<size_t>(n));
      }
    }
    void write(const std::string& bytes) { ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
    // Sends FIN; reading goes on. (Closing with unread bytes would send a
    // reset, and the client could lose what was written before it.)
    void shutdownWrite() { ::shutdown(fd_, SHUT_WR); }
    void respond(uint32_t txnr, const std::string& data) { write(relp::encodeFrame(txnr, "rsp", data)); }
    // Reads the open and accepts it as rsyslog does.
    bool acceptOpen() {
      relp::RelpFrameData open;
      if (!next(&open) || open.command != "open") return false;
      respond(open.txnr, "200 OK\nrelp_version=0\nrelp_software=fake\ncommands=syslog");
      return true;
    }
    // Keeps the connection until the client drops it or the server stops.
    void idle() {
      relp::RelpFrameData ignored;
      while (next(&ignored, std::chrono::milliseconds(100000))) {
      }
    }

   private:
    int fd_;
    const std::atomic<bool>& stopping_;
    relp::RelpParser parser_;
    std::string pending_;
  };
  // Runs a whole connection; its index counts from 0.
  using Session = std::function<void(Peer& peer, int index)>;

  explicit FakeRelpServer(Session session) : session_(std::move(session)) {
    listenFd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(listenFd_, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr);
    ::listen(listenFd_, 16);
    ::getsockname(listenFd_, reinterpret_cast<struct sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~FakeRelpServer() {
    stopping_ = true;
    thread_.join();
    ::close(listenFd_);
  }
  FakeRelpServer(const FakeRelpServer&) = delete;
  FakeRelpServer& operator=(const FakeRelpServer&) = delete;

  uint16_t port() const { return port_; }
  int connections() const { return connections_.load(); }

 private:
  void run() {
    while (!stopping_) {
      struct pollfd p = {listenFd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Peer peer(fd, stopping_);
      const int index = connections_++;
      session_(peer, index);
      ::close(fd);
    }
  }

  Session session_;
  int listenFd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace test
}  // namespace net
}  // namespace muon
