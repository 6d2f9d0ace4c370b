// Helpers shared by the net tests: blocking loopback clients, deadlines,
// fd counting, running code synchronously in a loop thread, an echo callback.
#pragma once

#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "muon/base/Timestamp.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"

namespace muon {
namespace net {
namespace test {

using Clock = std::chrono::steady_clock;

// Polls pred every millisecond until it holds or `timeout` passes.
inline bool waitFor(const std::function<bool()>& pred,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Runs f in loop's thread and waits for it.
template <typename F>
auto runSync(EventLoop* loop, F f) -> decltype(f()) {
  using R = decltype(f());
  auto task = std::make_shared<std::packaged_task<R()>>(std::move(f));
  std::future<R> result = task->get_future();
  loop->runInLoop([task] { (*task)(); });
  return result.get();
}

// Two round trips through loop's thread: whatever was queued there before
// the call has run, and so has anything that queued in turn (a close
// queued by an event handler, say).
inline void drainLoop(EventLoop* loop) {
  runSync(loop, [] {});
  runSync(loop, [] {});
}

// A message callback that sends back whatever arrived.
inline void echo(const TcpConnectionPtr& conn, Buffer* buf, Timestamp) { conn->send(buf); }

inline InetAddress loopback(uint16_t port, bool ipv6 = false) { return InetAddress(port, true, ipv6); }

// A blocking socket connected to addr, or -1. A receiveBuffer (bytes, set
// before the connect, so that the window it advertises is small) bounds
// what the kernels can hold of a server's sends: a test that needs bytes to
// stay queued in the server's output buffer asks for one.
inline int connectTo(const InetAddress& addr, int receiveBuffer = 0) {
  int fd = ::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (receiveBuffer > 0 &&
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, sizeof receiveBuffer) != 0) {
    ::close(fd);
    return -1;
  }
  if (::connect(fd, addr.getSockAddr(), addr.sockLen()) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool writeAll(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// Waits until fd is readable; false on timeout.
inline bool waitReadable(int fd, int timeoutMs) {
  struct pollfd pfd = {fd, POLLIN, 0};
  int n;
  do {
    n = ::poll(&pfd, 1, timeoutMs);
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

// Reads exactly len bytes (false on EOF, error, or 20 s without data).
inline bool readExactly(int fd, void* data, size_t len, int timeoutMs = 20000) {
  char* p = static_cast<char*>(data);
  while (len > 0) {
    if (!waitReadable(fd, timeoutMs)) return false;
    ssize_t n = ::read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

inline std::string readExactly(int fd, size_t len) {
  std::string s(len, '\0');
  if (!readExactly(fd, s.data(), len)) s.clear();
  return s;
}

// True if the next read sees EOF (within 20 s).
inline bool readsEof(int fd) {
  char c;
  if (!waitReadable(fd, 20000)) return false;
  return ::read(fd, &c, 1) == 0;
}

// Sends RST instead of FIN on close.
inline void closeWithReset(int fd) {
  struct linger lg = {1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  ::close(fd);
}

// Calls fn(number, target) for each descriptor open while it reads
// /proc/self/fd (target as readlink gives it: "socket:[123]"), skipping its
// own and any closed before its target could be read.
template <typename Fn>
void forEachOpenFd(Fn fn) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  const int own = ::dirfd(dir);
  while (struct dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.' || std::atoi(e->d_name) == own) continue;
    char target[256] = {};
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    if (::readlink(link.c_str(), target, sizeof target - 1) <= 0) continue;
    fn(e->d_name, std::string(target));
  }
  ::closedir(dir);
}

// Open descriptors other than anonymous pipes. UBSan's vptr check probes
// memory through a pipe it opens and closes at once, in whichever thread it
// runs: a loop thread destroying a functor while the test thread counts would
// otherwise add one or two. Nothing muon opens is a pipe.
inline int countOpenFds() {
  int n = 0;
  forEachOpenFd([&n](const char*, const std::string& target) {
    if (target.compare(0, 5, "pipe:") != 0) ++n;
  });
  return n;
}

// The process's open descriptors and what each refers to ("5 -> socket:[123]"),
// for failure messages of tests that count them.
inline std::string describeOpenFds() {
  std::string out;
  forEachOpenFd([&out](const char* number, const std::string& target) {
    out += std::string(number) + " -> " + target + "\n";
  });
  return out;
}

// Deterministic bytes that show order: byte i depends on i and seed.
inline std::string makePattern(size_t len, uint32_t seed = 1) {
  std::string s(len, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>(x >> 24);
  }
  return s;
}

// A port nothing listens on: bound once by us, then released.
inline uint16_t unusedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  InetAddress any = loopback(0);
  ::bind(fd, any.getSockAddr(), any.sockLen());
  struct sockaddr_in addr {};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<struct sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace test
}  // namespace net
}  // namespace muon
