// Acceptor on the failure paths (label `fault`): running out of fds, and
// accept errors other than EMFILE.
#include "muon/net/internal/Acceptor.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "LogCapture.h"
#include "NetTestUtil.h"
#include "muon/net/Buffer.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"
#include "muon/net/internal/SocketsOps.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

using namespace muon::net;
using namespace muon::net::test;
using muon::test::LogCapture;

namespace {

// Parent and child talk over two pipes, one byte or one int64 at a time.
bool sendValue(int fd, int64_t v) { return ::write(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v); }
bool recvValue(int fd, int64_t* v) { return readExactly(fd, v, sizeof *v, 20000); }

enum Command : int64_t { kMeasure = 1, kFreeFds = 2, kQuit = 3 };

// The forked child: an echo server that has used up its fds. Exit code 0
// on success, else the step that failed.
int emfileChild(int commands, int replies) {
  LogCapture logs;
  EventLoop loop;
  TcpServer server(&loop, loopback(0), "emfile");
  server.setMessageCallback(&echo);
  server.start();

  // The first log line loads the time zone (and sanitizers need a spare fd
  // the first time they check a type): do both while fds are left.
  LOG_WARN << "emfile child " << ::getpid() << " serving on " << server.listenAddress().toIpPort();

  // Use up every fd under a low limit (the Acceptor holds its spare already).
  struct rlimit lim;
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 10;
  lim.rlim_cur = static_cast<rlim_t>(countOpenFds() + 16);
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) return 11;
  std::vector<int> hogs;
  for (;;) {
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    hogs.push_back(fd);
  }
  if (errno != EMFILE) return 12;

  Channel commandChannel(&loop, commands);
  int result = 0;
  commandChannel.setReadCallback([&](muon::Timestamp) {
    int64_t cmd = 0;
    if (!recvValue(commands, &cmd)) {
      result = 13;
      loop.quit();
      return;
    }
    if (cmd == kMeasure) {
      // Iterations over 50 ms of "idle" time: a spinning loop makes thousands.
      int64_t start = loop.iteration();
      loop.runAfter(0.05, [&, start] {
        sendValue(replies, loop.iteration() - start);
        sendValue(replies, muon::test::LogCapture::count("out of file descriptors"));
      });
    } else if (cmd == kFreeFds) {
      for (int fd : hogs) ::close(fd);
      hogs.clear();
      sendValue(replies, 0);
    } else {
      loop.quit();
    }
  });
  commandChannel.enableReading();
  sendValue(replies, server.listenAddress().port());
  loop.loop();
  commandChannel.disableAll();
  commandChannel.remove();
  return result;
}

}  // namespace

TEST(AcceptorFault, EmfileDoesNotSpinAndAcceptingResumesWhenFdsAreFreed) {
  int toChild[2], toParent[2];
  ASSERT_EQ(::pipe2(toChild, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(toParent, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(emfileChild(toChild[0], toParent[1]));

  int64_t port = 0;
  ASSERT_TRUE(recvValue(toParent[0], &port));
  const InetAddress addr = loopback(static_cast<uint16_t>(port));

  // Out of fds, the child accepts and closes at once: each client sees the
  // end instead of hanging in the backlog.
  constexpr int kRejected = 5;
  for (int i = 0; i < kRejected; ++i) {
    int fd = connectTo(addr);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(waitReadable(fd, 20000)) << "connection " << i << " left hanging";
    char c;
    EXPECT_LE(::read(fd, &c, 1), 0);  // EOF (or reset)
    ::close(fd);
  }
  ASSERT_TRUE(sendValue(toChild[1], kMeasure));
  int64_t iterations = -1, logged = -1;
  ASSERT_TRUE(recvValue(toParent[0], &iterations));
  ASSERT_TRUE(recvValue(toParent[0], &logged));
  EXPECT_LE(iterations, 5) << "the loop spins";
  EXPECT_GE(logged, kRejected) << "rejections are logged";

  // Fds back: connections are served again.
  ASSERT_TRUE(sendValue(toChild[1], kFreeFds));
  int64_t ack;
  ASSERT_TRUE(recvValue(toParent[0], &ack));
  int fd = connectTo(addr);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(writeAll(fd, "back", 4));
  EXPECT_EQ(readExactly(fd, 4), "back");
  ::close(fd);

  ASSERT_TRUE(sendValue(toChild[1], kQuit));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (int p : {toChild[0], toChild[1], toParent[0], toParent[1]}) ::close(p);
}

TEST(AcceptorFault, OtherAcceptErrorsAreLoggedAndTheLoopKeepsRunning) {
  LogCapture logs;
  EventLoop loop;
  Acceptor acceptor(&loop, loopback(0), false);
  // Transient per-connection errors, then a memory shortage (pauses), then
  // the real accept.
  const std::vector<int> errors = {ECONNABORTED, EPROTO, EPERM, ENOBUFS};
  size_t calls = 0;
  acceptor.setAcceptFuncForTesting([&](int listenfd, struct sockaddr_in6* addr) {
    if (calls < errors.size()) {
      errno = errors[calls++];
      return -1;
    }
    return sockets::accept(listenfd, addr);
  });
  int accepted = -1;
  acceptor.setNewConnectionCallback([&](int fd, const InetAddress& peer) {
    accepted = fd;
    EXPECT_EQ(peer.toIp(), "127.0.0.1");
    loop.quit();
  });
  acceptor.listen();
  int timerFired = 0;
  loop.runEvery(0.01, [&] { ++timerFired; });  // the loop keeps serving timers
  loop.runAfter(10, [&] { loop.quit(); });      // a safety net, never reached
  int client = connectTo(InetAddress(sockets::getLocalAddr(acceptor.fd())));
  ASSERT_GE(client, 0);
  loop.loop();
  ASSERT_GE(accepted, 0);
  EXPECT_EQ(calls, errors.size());
  EXPECT_GE(timerFired, 3);  // the ENOBUFS pause (100 ms) let timers run
  EXPECT_LT(loop.iteration(), 100);  // paused, not spinning
  EXPECT_TRUE(LogCapture::contains("Software caused connection abort"));
  EXPECT_TRUE(LogCapture::contains("Protocol error"));
  EXPECT_TRUE(LogCapture::contains("Operation not permitted"));
  EXPECT_TRUE(LogCapture::contains("pausing accept"));
  ::close(accepted);
  ::close(client);
}

TEST(AcceptorFault, EmfileRejectsWithTheSpareFd) {
  LogCapture logs;
  EventLoop loop;
  Acceptor acceptor(&loop, loopback(0), false);
  bool injected = false;
  acceptor.setAcceptFuncForTesting([&](int listenfd, struct sockaddr_in6* addr) {
    if (!injected) {  // the first accept fails as if out of fds
      injected = true;
      errno = EMFILE;
      return -1;
    }
    return sockets::accept(listenfd, addr);
  });
  int accepted = 0;
  acceptor.setNewConnectionCallback([&](int fd, const InetAddress&) {
    ++accepted;
    ::close(fd);
    loop.quit();
  });
  acceptor.listen();
  const InetAddress addr(sockets::getLocalAddr(acceptor.fd()));
  int rejected = connectTo(addr);
  ASSERT_GE(rejected, 0);
  int second = -1;
  loop.runAfter(0.02, [&] {
    // By now the first client has been accepted-and-closed; a second one
    // goes through normally.
    second = connectTo(addr);
    EXPECT_GE(second, 0);
  });
  loop.runAfter(10, [&] { loop.quit(); });
  loop.loop();
  EXPECT_EQ(accepted, 1);
  EXPECT_EQ(acceptor.rejectedForFds(), 1);
  EXPECT_TRUE(readsEof(rejected));
  ::close(rejected);
  ::close(second);
}

// One readable event takes the whole backlog (accept until EAGAIN), not one
// connection per poll.
TEST(Acceptor, AcceptsEveryPendingConnectionInOneEvent) {
  constexpr size_t kPending = 10;
  EventLoop loop;
  Acceptor acceptor(&loop, loopback(0), false);
  std::vector<int> accepted;
  std::vector<int64_t> iterations;
  acceptor.setNewConnectionCallback([&](int fd, const InetAddress&) {
    accepted.push_back(fd);
    iterations.push_back(loop.iteration());
    if (accepted.size() == kPending) loop.quit();
  });
  acceptor.listen();
  const InetAddress addr(sockets::getLocalAddr(acceptor.fd()));
  std::vector<int> clients;
  for (size_t i = 0; i < kPending; ++i) {
    int fd = connectTo(addr);
    ASSERT_GE(fd, 0);
    clients.push_back(fd);
  }
  // All of them in the accept queue before the loop first polls (for a
  // listening socket, TCP_INFO's tcpi_unacked is the accept queue length).
  ASSERT_TRUE(waitFor([&] {
    struct tcp_info info {};
    socklen_t len = static_cast<socklen_t>(sizeof info);
    return ::getsockopt(acceptor.fd(), SOL_TCP, TCP_INFO, &info, &len) == 0 &&
           info.tcpi_unacked == kPending;
  }));
  loop.runAfter(10, [&] { loop.quit(); });  // a safety net, never reached
  loop.loop();
  ASSERT_EQ(accepted.size(), kPending);
  EXPECT_EQ(loop.iteration(), 1);
  for (int64_t it : iterations) EXPECT_EQ(it, 1);
  for (int fd : accepted) ::close(fd);
  for (int fd : clients) ::close(fd);
}
