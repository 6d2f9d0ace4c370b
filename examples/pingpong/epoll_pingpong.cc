// The floor for the pingpong pairs: a bare epoll echo, no framework. Built
// twice: epoll_pingpong_server (EPOLL_PINGPONG_SERVER defined) and
// epoll_pingpong_client, with the command lines of pingpong_server and
// pingpong_client:
//   epoll_pingpong_server ADDRESS PORT THREADS
//   epoll_pingpong_client ADDRESS PORT THREADS BLOCKSIZE SESSIONS SECONDS
// Each thread has its own epoll set (the server's threads each their own
// SO_REUSEPORT listener on one port), level-triggered, one read then one
// write per readable event; bytes a write did not take wait for EPOLLOUT.
// IPv4 only. The client prints the totals as pingpong_client does.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <atomic>
#include <thread>

#include "CommandLine.h"

namespace {

struct Conn {
  std::string pending;  // bytes the socket did not take yet
};

// Each thread's own.
thread_local std::vector<Conn> conns;  // by fd
thread_local int ep = -1;
thread_local long long bytesRead = 0, messagesRead = 0;
std::atomic<long long> totalBytes{0}, totalMessages{0};

void watch(int fd, uint32_t events, int op) {
  struct epoll_event ev {};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(ep, op, fd, &ev) != 0) std::perror("epoll_ctl"), std::exit(1);
}

void setUp(int fd, int op) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (static_cast<size_t>(fd) >= conns.size()) conns.resize(static_cast<size_t>(fd) * 2 + 1);
  conns[static_cast<size_t>(fd)].pending.clear();
  watch(fd, EPOLLIN, op);
}

void closeConn(int fd) {
  ::epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
}

// Sends data (after what is pending); what the socket does not take waits.
void sendOrQueue(int fd, const char* data, size_t len) {
  Conn& c = conns[static_cast<size_t>(fd)];
  if (!c.pending.empty()) return c.pending.append(data, len), void();
  ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) n = 0;
  if (static_cast<size_t>(n) < len) {
    c.pending.assign(data + n, len - static_cast<size_t>(n));
    watch(fd, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
  }
}

void onEvent(int fd, uint32_t events, bool counting) {
  static char buf[64 * 1024];
  if (events & EPOLLOUT) {
    Conn& c = conns[static_cast<size_t>(fd)];
    ssize_t n = ::send(fd, c.pending.data(), c.pending.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) c.pending.erase(0, static_cast<size_t>(n));
    if (c.pending.empty()) watch(fd, EPOLLIN, EPOLL_CTL_MOD);
  }
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      if (counting) bytesRead += n, ++messagesRead;
      sendOrQueue(fd, buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EAGAIN) {
      closeConn(fd);
    }
  }
}

#ifdef EPOLL_PINGPONG_SERVER
int listenOn(struct sockaddr_in* addr) {
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  socklen_t len = sizeof *addr;
  if (::bind(lfd, reinterpret_cast<sockaddr*>(addr), len) != 0 || ::listen(lfd, 4096) != 0 ||
      ::getsockname(lfd, reinterpret_cast<sockaddr*>(addr), &len) != 0) {
    std::perror("bind/listen"), std::exit(1);
  }
  return lfd;
}

void serve(int lfd) {
  ep = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<struct epoll_event> events(1024);
  watch(lfd, EPOLLIN, EPOLL_CTL_ADD);
  for (;;) {
    int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), -1);
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<size_t>(i)].data.fd;
      if (fd != lfd) {
        onEvent(fd, events[static_cast<size_t>(i)].events, false);
        continue;
      }
      for (int c; (c = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
        setUp(c, EPOLL_CTL_ADD);
      }
    }
  }
}
#else
void drive(const struct sockaddr_in& addr, const std::string& message, int sessions, double seconds) {
  ep = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<struct epoll_event> events(1024);
  for (int i = 0; i < sessions; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      std::perror("connect"), std::exit(1);
    }
    setUp(fd, EPOLL_CTL_ADD);
    sendOrQueue(fd, message.data(), message.size());
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    for (int i = 0; i < n; ++i) {
      onEvent(events[static_cast<size_t>(i)].data.fd, events[static_cast<size_t>(i)].events, true);
    }
  }
  totalBytes += bytesRead;
  totalMessages += messagesRead;
}
#endif

}  // namespace

int main(int argc, char* argv[]) {
#ifdef EPOLL_PINGPONG_SERVER
  const int wantArgc = 4;
  const char* const kUsage = "usage: %s ADDRESS PORT THREADS\n";
#else
  const int wantArgc = 7;
  const char* const kUsage = "usage: %s ADDRESS PORT THREADS BLOCKSIZE SESSIONS SECONDS\n";
#endif
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  if (help || argc != wantArgc) {
    std::fprintf(help ? stdout : stderr, kUsage, argv[0]);
    return help ? 0 : 2;
  }
  struct sockaddr_in addr {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[2])));
  const int threads = std::atoi(argv[3]);
  if (::inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1 || threads < 1) {
    return std::fprintf(stderr, "%s: want an IPv4 address and THREADS >= 1\n", argv[0]), 2;
  }
  std::vector<std::thread> workers;
#ifdef EPOLL_PINGPONG_SERVER
  std::vector<int> listeners{listenOn(&addr)};  // port 0 becomes the real port here
  for (int i = 1; i < threads; ++i) listeners.push_back(listenOn(&addr));
  std::printf("listening on %s:%d\n", argv[1], ntohs(addr.sin_port));
  std::fflush(stdout);
  for (int lfd : listeners) workers.emplace_back(serve, lfd);
  for (auto& w : workers) w.join();
#else
  const std::string message(static_cast<size_t>(std::atol(argv[4])), 'x');
  const int sessions = std::atoi(argv[5]);
  const double seconds = std::atof(argv[6]);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back(drive, std::cref(addr), std::cref(message),
                         sessions / threads + (i < sessions % threads ? 1 : 0), seconds);
  }
  for (auto& w : workers) w.join();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long long bytes = totalBytes, messages = totalMessages;
  std::printf("%lld total bytes read\n%lld total messages read\n", bytes, messages);
  std::printf("%.2f average message size\n",
              messages > 0 ? static_cast<double>(bytes) / static_cast<double>(messages) : 0.0);
  std::printf("%.2f MiB/s throughput\n", static_cast<double>(bytes) / elapsed / (1024 * 1024));
#endif
  return 0;
}
