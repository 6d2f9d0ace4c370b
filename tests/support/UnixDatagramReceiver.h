// A UNIX datagram socket in a temporary directory standing in for a syslog
// daemon: what a sink sends, as it sends it. It can be bound late (a daemon
// that appears) and left unread (a daemon that hangs). For tests only; one
// thread.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "TempDir.h"

namespace muon {
namespace test {

class UnixDatagramReceiver {
 public:
  // Binds at once unless `bindNow` is false (then bind() does).
  explicit UnixDatagramReceiver(bool bindNow = true) : path_(dir_.file("log")) {
    if (bindNow) bind();
  }
  ~UnixDatagramReceiver() {
    close();
    ::unlink(path_.c_str());
  }
  UnixDatagramReceiver(const UnixDatagramReceiver&) = delete;
  UnixDatagramReceiver& operator=(const UnixDatagramReceiver&) = delete;

  // Creates the socket at path(); false if it cannot.
  bool bind() {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path_.data(), path_.size());
    bound_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0;
    return bound_;
  }
  // Closes the socket: a sink blocked on it wakes with an error.
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool bound() const { return bound_; }
  const std::string& path() const { return path_; }

  // The next message, or "" after `timeoutMs` without one.
  std::string receive(int timeoutMs = 1000) {
    struct pollfd p = {fd_, POLLIN, 0};
    if (::poll(&p, 1, timeoutMs) != 1) return std::string();
    char buf[8192];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }

 private:
  TempDir dir_;
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

}  // namespace test
}  // namespace muon
