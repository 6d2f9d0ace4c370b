// http_floor_server: the least a server can do to answer the HTTP benchmark,
// as a floor to measure muon's HttpServer and Beast against (see
// examples/bench/http_bench.sh and docs/net.md).
//
//   http_floor_server PORT THREADS
//
// No framework, no parser: THREADS threads, each with its own epoll set,
// share one listening socket on 127.0.0.1:PORT (0: a free port; it prints
// "listening on 127.0.0.1:PORT"). A readable connection gets one recv; every
// "\r\n\r\n" in what arrived (a match may span two reads) is a request, and
// each is answered with the same bytes muon's http_hello_server sends for
// GET / ("Hello, World!", "Server: muon", keep-alive), in one send. It does
// what a real server cannot skip (one recv and one send per batch of
// requests, one epoll_wait per batch of events) and nothing else, so the
// rate it reaches on a machine is the ceiling for any server there that
// answers the same way. It is not an HTTP server: it ignores methods, paths,
// bodies and Connection: close. Stops on SIGTERM or SIGINT.
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "CommandLine.h"

using muon::examples::parseInt;
using muon::examples::raiseFdLimit;

namespace {

const char kAnswer[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nServer: muon\r\n"
    "Content-Length: 13\r\nConnection: keep-alive\r\n\r\nHello, World!";
const char kEnd[] = "\r\n\r\n";

std::atomic<bool> g_stop{false};

void onSignal(int) { g_stop.store(true); }

// A connection: how much of "\r\n\r\n" the input ended with, and answers the
// socket did not take yet.
struct Connection {
  int matched = 0;
  std::string unsent;
};

// Counts the requests ended in data[0, len), carrying a partial terminator.
int countRequests(Connection* c, const char* data, size_t len) {
  int n = 0;
  for (size_t i = 0; i < len; ++i) {
    if (data[i] == kEnd[c->matched]) {
      if (++c->matched == 4) {
        ++n;
        c->matched = 0;
      }
    } else {
      c->matched = data[i] == '\r' ? 1 : 0;
    }
  }
  return n;
}

void closeConnection(int epfd, int fd, std::unordered_map<int, Connection>* conns) {
  ::epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  conns->erase(fd);
}

// Sends c->unsent; waits for EPOLLOUT while the socket does not take it all.
// Returns false when the connection is dead.
bool flush(int epfd, int fd, Connection* c) {
  while (!c->unsent.empty()) {
    ssize_t n = ::send(fd, c->unsent.data(), c->unsent.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) return false;
      struct epoll_event ev = {};
      ev.events = EPOLLIN | EPOLLOUT;
      ev.data.fd = fd;
      ::epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
      return true;
    }
    c->unsent.erase(0, static_cast<size_t>(n));
  }
  return true;
}

void serve(int listener) {
  const int epfd = ::epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {};
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  ev.data.fd = listener;
  ::epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev);
  std::unordered_map<int, Connection> conns;
  std::vector<struct epoll_event> events(1024);
  std::vector<char> input(64 * 1024);
  const size_t answerLen = sizeof kAnswer - 1;
  while (!g_stop.load(std::memory_order_relaxed)) {
    const int n = ::epoll_wait(epfd, events.data(), static_cast<int>(events.size()), 100);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listener) {
        const int conn = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (conn < 0) continue;  // another thread took it, or EMFILE: the next event retries
        const int one = 1;
        ::setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event cev = {};
        cev.events = EPOLLIN;
        cev.data.fd = conn;
        ::epoll_ctl(epfd, EPOLL_CTL_ADD, conn, &cev);
        conns[conn];
        continue;
      }
      Connection& c = conns[fd];
      if (events[i].events & EPOLLOUT) {
        if (!flush(epfd, fd, &c)) {
          closeConnection(epfd, fd, &conns);
          continue;
        }
        if (c.unsent.empty()) {
          struct epoll_event cev = {};
          cev.events = EPOLLIN;
          cev.data.fd = fd;
          ::epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &cev);
        }
      }
      if (!(events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
      const ssize_t got = ::recv(fd, input.data(), input.size(), 0);
      if (got <= 0) {
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        closeConnection(epfd, fd, &conns);
        continue;
      }
      const int requests = countRequests(&c, input.data(), static_cast<size_t>(got));
      if (requests == 0) continue;
      const bool idle = c.unsent.empty();
      for (int r = 0; r < requests; ++r) c.unsent.append(kAnswer, answerLen);
      if (idle && !flush(epfd, fd, &c)) closeConnection(epfd, fd, &conns);
    }
  }
  for (auto& entry : conns) ::close(entry.first);
  ::close(epfd);
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, threads = 0;
  if (help || argc != 3 || !parseInt(argv[1], 0, 65535, &port) ||
      !parseInt(argv[2], 1, 256, &threads)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT THREADS\n"
                 "  answers every request with \"Hello, World!\" on 127.0.0.1:PORT (0: a free\n"
                 "  port), the floor of the HTTP benchmark; THREADS 1..256\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  raiseFdLimit();
  struct sigaction sa = {};
  sa.sa_handler = onSignal;  // no SA_RESTART: epoll_wait returns at once
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, SOMAXCONN) != 0 ||
      ::getsockname(listener, reinterpret_cast<struct sockaddr*>(&addr), &len) != 0) {
    std::fprintf(stderr, "http_floor_server: cannot listen on port %ld: %s\n", port,
                 std::strerror(errno));
    return 1;
  }
  std::printf("listening on 127.0.0.1:%u\n", ntohs(addr.sin_port));
  std::fflush(stdout);

  std::vector<std::thread> workers;
  for (long i = 1; i < threads; ++i) workers.emplace_back(serve, listener);
  serve(listener);
  for (auto& t : workers) t.join();
  ::close(listener);
}
