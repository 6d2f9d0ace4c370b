// The floor for the pingpong pairs: a bare epoll echo, no framework. Built
// twice: epoll_pingpong_server (EPOLL_PINGPONG_SERVER defined) and
// epoll_pingpong_client, with the command lines of pingpong_server and
// pingpong_client (THREADS must be 1):
//   epoll_pingpong_server ADDRESS PORT 1
//   epoll_pingpong_client ADDRESS PORT 1 BLOCKSIZE SESSIONS SECONDS
// One thread, level-triggered, one read then one write per readable event;
// bytes a write did not take wait for EPOLLOUT. IPv4 only. The client prints
// the totals as pingpong_client does.
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

namespace {

struct Conn {
  std::string pending;  // bytes the socket did not take yet
};

std::vector<Conn> conns;  // by fd
int ep = -1;
long long bytesRead = 0, messagesRead = 0;

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

}  // namespace

int main(int argc, char* argv[]) {
#ifdef EPOLL_PINGPONG_SERVER
  if (argc != 4) return std::fprintf(stderr, "usage: %s ADDRESS PORT 1\n", argv[0]), 2;
#else
  if (argc != 7) return std::fprintf(stderr, "usage: %s ADDRESS PORT 1 BLOCKSIZE SESSIONS SECONDS\n", argv[0]), 2;
#endif
  struct sockaddr_in addr {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[2])));
  if (::inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1 || std::atoi(argv[3]) != 1) {
    return std::fprintf(stderr, "%s: want an IPv4 address and THREADS 1\n", argv[0]), 2;
  }
  ep = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<struct epoll_event> events(1024);
#ifdef EPOLL_PINGPONG_SERVER
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = sizeof addr;
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(lfd, 4096) != 0 ||
      ::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return std::perror("bind/listen"), 1;
  }
  std::printf("listening on %s:%d\n", argv[1], ntohs(addr.sin_port));
  std::fflush(stdout);
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
#else
  const size_t block = static_cast<size_t>(std::atol(argv[4]));
  const int sessions = std::atoi(argv[5]);
  const double seconds = std::atof(argv[6]);
  const std::string message(block, 'x');
  for (int i = 0; i < sessions; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      return std::perror("connect"), 1;
    }
    setUp(fd, EPOLL_CTL_ADD);
    sendOrQueue(fd, message.data(), message.size());
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    for (int i = 0; i < n; ++i) {
      onEvent(events[static_cast<size_t>(i)].data.fd, events[static_cast<size_t>(i)].events, true);
    }
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%lld total bytes read\n%lld total messages read\n", bytesRead, messagesRead);
  std::printf("%.2f average message size\n",
              messagesRead > 0 ? static_cast<double>(bytesRead) / static_cast<double>(messagesRead) : 0.0);
  std::printf("%.2f MiB/s throughput\n", static_cast<double>(bytesRead) / elapsed / (1024 * 1024));
  return 0;
#endif
}
