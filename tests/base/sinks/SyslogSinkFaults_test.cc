// SyslogSink against daemons that misbehave, played by plain sockets the
// test holds: UDP refusals, a socket connected to itself, a UNIX daemon that
// never reads, a TCP daemon that closes the connection, one that comes back
// after an outage, and a full queue dropping the oldest or the newest lines.
// ctest labels `syslog` and `fault`; no rsyslogd needed.
#include "muon/base/SyslogSink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "UnixDatagramReceiver.h"

using muon::SyslogOptions;
using muon::SyslogSink;
using muon::test::UnixDatagramReceiver;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct sockaddr_in loopback(uint16_t port) {
  struct sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return addr;
}

uint16_t portOf(int fd) {
  struct sockaddr_in addr = {};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<struct sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

// A socket of `type` bound to 127.0.0.1:port (0: the kernel's choice) with
// SO_REUSEADDR, listening if it is TCP; -1 if the port is taken.
int bindLoopback(int type, uint16_t port) {
  int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in addr = loopback(port);
  if (::bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 16) != 0)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The same, retried for up to `timeoutMs` while the port is taken (by a
// sink's socket trying it, or by another program).
int bindLoopbackWithin(int type, uint16_t port, int timeoutMs) {
  const auto deadline = Clock::now() + milliseconds(timeoutMs);
  int fd;
  while ((fd = bindLoopback(type, port)) < 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  return fd;
}

// A loopback port that nobody holds now: the kernel's pick, released.
uint16_t unusedPort(int type) {
  int fd = bindLoopback(type, 0);
  const uint16_t port = fd >= 0 ? portOf(fd) : 0;
  if (fd >= 0) ::close(fd);
  return port;
}

bool readableWithin(int fd, int timeoutMs) {
  struct pollfd p = {fd, POLLIN, 0};
  return ::poll(&p, 1, timeoutMs) == 1;
}

// Accepts one connection within `timeoutMs`; -1 if none came.
int acceptWithin(int listener, int timeoutMs) {
  if (!readableWithin(listener, timeoutMs)) return -1;
  return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
}

// Reads `fd` until `part` has come or `timeoutMs` has passed; what came.
std::string readUntil(int fd, const std::string& part, int timeoutMs) {
  const auto deadline = Clock::now() + milliseconds(timeoutMs);
  std::string got;
  while (got.find(part) == std::string::npos) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || !readableWithin(fd, static_cast<int>(left))) break;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A UDP daemon's port with nobody behind it: every send is answered with a
// refusal (ICMP port unreachable). The sink keeps its one socket, counts the
// refused lines lost, and makes no new connection per line (it made one per
// refusal, and sent into a socket connected to itself when the kernel gave
// it the daemon's port).
TEST(SyslogSinkFaults, UdpKeepsItsSocketWhenTheDaemonRefuses) {
  SyslogOptions options;
  options.transport = SyslogOptions::kUdp;
  options.port = unusedPort(SOCK_DGRAM);
  ASSERT_NE(options.port, 0);
  options.firstRetryMs = 1;
  options.maxRetryMs = 1;
  SyslogSink sink(options);
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 5; ++i) sink.append("refused\n", 8);
    sink.flush();
  }
  const SyslogSink::Stats stats = sink.stats();
  EXPECT_EQ(stats.reconnects, 0u);
  EXPECT_EQ(stats.sent + stats.lost + stats.dropped, 50u);
  EXPECT_GE(stats.lost, 10u) << "at least one refusal a round";
}

// A line longer than a UDP datagram can be is lost alone: it says nothing
// of the daemon, so the lines around it are sent without a back-off.
TEST(SyslogSinkFaults, UdpLineTooLongForADatagramIsLostAlone) {
  const int daemon = bindLoopback(SOCK_DGRAM, 0);
  ASSERT_GE(daemon, 0);
  SyslogOptions options;
  options.transport = SyslogOptions::kUdp;
  options.port = portOf(daemon);
  options.firstRetryMs = 60000;  // a back-off would outlast the test
  SyslogSink sink(options);
  const std::string tooLong(70000, 'x');
  sink.append("before\n", 7);
  sink.append(tooLong.data(), tooLong.size());
  sink.append("after\n", 6);
  sink.flush();
  const SyslogSink::Stats stats = sink.stats();
  EXPECT_EQ(stats.sent, 2u);
  EXPECT_EQ(stats.lost, 1u);
  std::string got;
  while (readableWithin(daemon, 1000) && !has(got, "after")) got += readUntil(daemon, "after", 100);
  EXPECT_TRUE(has(got, "before"));
  EXPECT_TRUE(has(got, "after"));
  ::close(daemon);
}

// Moves the calling thread, and the threads it starts from then on, into a
// network namespace of its own: loopback up, and only the ports given as
// ephemeral ones. Back in the original one on destruction. Needs
// CAP_SYS_ADMIN; ok() is false, with why(), where it is missing.
class PrivateNetwork {
 public:
  PrivateNetwork(uint16_t first, uint16_t last) {
    original_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (original_ < 0) {
      why_ = std::string("/proc/thread-self/ns/net: ") + std::strerror(errno);
      return;
    }
    if (::unshare(CLONE_NEWNET) != 0) {
      why_ = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
      return;
    }
    entered_ = true;
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr = {};
    std::strcpy(ifr.ifr_name, "lo");
    const bool up = ::ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 &&
                    (ifr.ifr_flags |= IFF_UP, ::ioctl(fd, SIOCSIFFLAGS, &ifr) == 0);
    ::close(fd);
    if (!up) {
      why_ = std::string("loopback up: ") + std::strerror(errno);
    } else if (!setEphemeralPorts(first, last)) {
      why_ = std::string("ip_local_port_range: ") + std::strerror(errno);
    }
  }
  ~PrivateNetwork() {
    if (entered_) ::setns(original_, CLONE_NEWNET);
    if (original_ >= 0) ::close(original_);
  }
  PrivateNetwork(const PrivateNetwork&) = delete;
  PrivateNetwork& operator=(const PrivateNetwork&) = delete;

  bool ok() const { return entered_ && why_.empty(); }
  const std::string& why() const { return why_; }

  bool setEphemeralPorts(uint16_t first, uint16_t last) {
    int fd = ::open("/proc/sys/net/ipv4/ip_local_port_range", O_WRONLY | O_CLOEXEC);
    const std::string range = std::to_string(first) + ' ' + std::to_string(last);
    const bool written =
        fd >= 0 && ::write(fd, range.data(), range.size()) == static_cast<ssize_t>(range.size());
    if (fd >= 0) ::close(fd);
    return written;
  }

 private:
  int original_ = -1;
  bool entered_ = false;
  std::string why_;
};

class SelfConnectTest : public ::testing::TestWithParam<SyslogOptions::Transport> {};

// The daemon's port is the only ephemeral one and nobody holds it, so every
// socket the sink makes gets it as its own and connects to itself (in a
// namespace of the test's own, where a fixed port collides with nothing).
// The sink refuses such a socket: nothing counts as sent, every line as
// lost, and the port is free for the daemon, which the sink then reaches.
TEST_P(SelfConnectTest, ASocketConnectedToItselfIsClosedAndCountsAsUnreachable) {
  constexpr uint16_t kPort = 40000;
  PrivateNetwork network(kPort, kPort);
  if (!network.ok()) GTEST_SKIP() << "no private network namespace: " << network.why();
  const int type = GetParam() == SyslogOptions::kTcp ? SOCK_STREAM : SOCK_DGRAM;
  SyslogOptions options;
  options.transport = GetParam();
  options.port = kPort;
  options.firstRetryMs = 1;
  options.maxRetryMs = 5;
  options.flushTimeoutMs = 5000;
  SyslogSink sink(options);
  for (int i = 0; i < 20; ++i) sink.append("to nobody\n", 10);
  sink.flush();
  SyslogSink::Stats stats = sink.stats();
  EXPECT_EQ(stats.sent, 0u);
  EXPECT_EQ(stats.lost, 20u);

  // The daemon starts on its port; the sink now gets the other one.
  ASSERT_TRUE(network.setEphemeralPorts(kPort, kPort + 1));
  const int daemon = bindLoopbackWithin(type, kPort, 2000);
  ASSERT_GE(daemon, 0) << "the sink keeps the daemon's port";
  std::string got;
  int connection = -1;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!has(got, "arrived") && Clock::now() < deadline) {
    sink.append("arrived\n", 8);
    if (type == SOCK_DGRAM) {
      got += readableWithin(daemon, 50) ? readUntil(daemon, "arrived", 50) : "";
    } else {
      if (connection < 0) connection = acceptWithin(daemon, 50);
      if (connection >= 0) got += readUntil(connection, "arrived", 50);
    }
  }
  EXPECT_TRUE(has(got, "arrived"));
  if (connection >= 0) ::close(connection);
  ::close(daemon);
}

INSTANTIATE_TEST_SUITE_P(Transports, SelfConnectTest,
                         ::testing::Values(SyslogOptions::kUdp, SyslogOptions::kTcp),
                         [](const ::testing::TestParamInfo<SyslogOptions::Transport>& param) {
                           return param.param == SyslogOptions::kTcp ? "Tcp" : "Udp";
                         });

// A daemon that is alive but never reads: its socket's queue fills and a
// send would wait for ever. Each send waits at most sendTimeoutMs, what it
// could not send is counted lost, and the destructor returns in about
// flushTimeoutMs + sendTimeoutMs.
// flush() waits for the lines queued before it to be sent, and returns as
// soon as they are: its timeout is a bound for a daemon that stalls, not a
// wait. A flush that waited its timeout out would take 20 s here.
TEST(SyslogSinkFaults, FlushReturnsOnceTheLinesAreSentNotAtItsTimeout) {
  UnixDatagramReceiver daemon;
  SyslogOptions options;
  options.flushTimeoutMs = 20000;
  options.path = daemon.path();
  SyslogSink sink(options);
  ASSERT_TRUE(daemon.bound());

  for (int i = 0; i < 3; ++i) sink.append("flushed\n", 8);
  std::future<void> flushed = std::async(std::launch::async, [&] { sink.flush(); });
  EXPECT_EQ(flushed.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  flushed.wait();
  EXPECT_EQ(sink.stats().sent, 3u);
  for (int i = 0; i < 3; ++i) {
    const std::string message = daemon.receive();
    EXPECT_NE(message.find(" - - flushed"), std::string::npos) << message;
  }
}

TEST(SyslogSinkFaults, UnixDaemonThatNeverReadsCostsAtMostTheSendTimeout) {
  UnixDatagramReceiver daemon;
  ASSERT_TRUE(daemon.bound());
  SyslogOptions options;
  options.path = daemon.path();
  options.sendTimeoutMs = 200;
  options.flushTimeoutMs = 100;
  options.firstRetryMs = 10;
  auto sink = std::make_unique<SyslogSink>(options);

  for (int i = 0; i < 100; ++i) sink->append("unread\n", 7);
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  SyslogSink::Stats stats = sink->stats();
  while (stats.sent + stats.lost + stats.dropped < 100 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
    stats = sink->stats();
  }
  EXPECT_EQ(stats.sent + stats.lost + stats.dropped, 100u) << "sent " << stats.sent;
  EXPECT_GT(stats.lost, 0u);
  EXPECT_LT(stats.sent, 100u);

  // Destroyed while a send waits on the full socket. Without a bound it
  // would wait for ever: the test closes the daemon's socket after 3 s to
  // end it, and fails.
  for (int i = 0; i < 100; ++i) sink->append("unread\n", 7);
  const auto start = Clock::now();
  std::future<void> destroyed = std::async(std::launch::async, [&] { sink.reset(); });
  const bool inTime = destroyed.wait_for(std::chrono::seconds(3)) == std::future_status::ready;
  const auto took = Clock::now() - start;
  if (!inTime) daemon.close();
  destroyed.wait();
  EXPECT_TRUE(inTime);
  EXPECT_LT(took, milliseconds(options.flushTimeoutMs + options.sendTimeoutMs + 400));
}

// The daemon closes the TCP connection while the sink is idle (it died, or
// restarted). The next line is not written into the dead connection and
// counted sent: it goes on a new connection when one can be made, and is
// counted lost when none can.
TEST(SyslogSinkFaults, TcpLineAfterTheDaemonClosedIsResentOrCountedNeverSentIntoTheDeadConnection) {
  int listener = bindLoopback(SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  SyslogOptions options;
  options.transport = SyslogOptions::kTcp;
  options.port = portOf(listener);
  SyslogSink sink(options);

  sink.append("first\n", 6);
  int connection = acceptWithin(listener, 2000);
  ASSERT_GE(connection, 0);
  ASSERT_TRUE(has(readUntil(connection, "first", 2000), "first"));
  ::close(connection);  // the daemon ends the connection; it still listens
  std::this_thread::sleep_for(milliseconds(20));  // its FIN reaches the sink
  sink.append("second\n", 7);
  sink.flush();
  connection = acceptWithin(listener, 2000);
  ASSERT_GE(connection, 0) << "the line went into the dead connection";
  EXPECT_TRUE(has(readUntil(connection, "second", 2000), "second"));
  SyslogSink::Stats stats = sink.stats();
  EXPECT_EQ(stats.sent, 2u);
  EXPECT_EQ(stats.lost, 0u);
  EXPECT_EQ(stats.reconnects, 1u);

  ::close(connection);  // and now the daemon is gone altogether
  ::close(listener);
  std::this_thread::sleep_for(milliseconds(20));
  sink.append("third\n", 6);
  sink.flush();
  stats = sink.stats();
  EXPECT_EQ(stats.sent, 2u);
  EXPECT_EQ(stats.lost, 1u);
}

// A TCP daemon down for 0.8 s from the start, then back on its port: with
// the default back-off the sink reaches it within 0.5 s of its return (a
// back-off doubling to 5 s came 0.7 s late).
// A TCP daemon that stops reading (stalled: busy, or stopped): a send times
// out, and the sink keeps that connection instead of making a new one to
// the same daemon, whose kernel would take another socket buffer of lines
// (thousands) that a kill then loses uncounted. Once the daemon reads again,
// the lines go on over the same connection. (It reconnected after each
// timeout.)
TEST(SyslogSinkFaults, TcpDaemonThatStopsReadingKeepsItsOneConnection) {
  const int listener = bindLoopback(SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  SyslogOptions options;
  options.transport = SyslogOptions::kTcp;
  options.port = portOf(listener);
  options.sendTimeoutMs = 50;
  options.firstRetryMs = 10;
  options.maxRetryMs = 20;
  SyslogSink sink(options);
  sink.append("first\n", 6);
  const int daemon = acceptWithin(listener, 5000);
  ASSERT_GE(daemon, 0);
  // Never read: lines until the socket buffers are full and sends time out
  // again and again.
  const std::string line(200, 'x');
  const auto start = Clock::now();
  while (Clock::now() - start < milliseconds(1500)) {
    for (int i = 0; i < 1000; ++i) sink.append(line.data(), line.size());
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_GT(sink.stats().lost, 0u) << "no send timed out";
  EXPECT_EQ(sink.stats().reconnects, 0u);
  EXPECT_FALSE(readableWithin(listener, 0)) << "a second connection to the stalled daemon";
  // The daemon reads again: a line logged now arrives on the same
  // connection, and every byte it got is a whole octet-counted frame
  // (RFC 6587), one after another: the rest of a frame that a timeout cut,
  // had it gone missing, would make every later frame unreadable.
  std::string got;
  size_t parsed = 0;
  size_t frames = 0;
  bool arrived = false;
  const auto reading = Clock::now();
  while (!arrived && Clock::now() - reading < std::chrono::seconds(10)) {
    sink.append("after the stall\n", 16);
    char buf[65536];
    while (readableWithin(daemon, 1)) {
      const ssize_t n = ::recv(daemon, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    while (parsed < got.size()) {
      const size_t space = got.find(' ', parsed);
      if (space == std::string::npos) break;  // a length still coming
      const std::string digits = got.substr(parsed, space - parsed);
      ASSERT_TRUE(!digits.empty() && digits.size() <= 6 &&
                  digits.find_first_not_of("0123456789") == std::string::npos)
          << "frame " << frames << " at byte " << parsed << " has no length: "
          << got.substr(parsed, 40);
      const size_t length = std::stoul(digits);
      if (space + 1 + length > got.size()) break;  // its bytes still coming
      const std::string message = got.substr(space + 1, length);
      ASSERT_EQ(message[0], '<') << "frame " << frames << ": " << message.substr(0, 40);
      if (message.find("after the stall") != std::string::npos) arrived = true;
      parsed = space + 1 + length;
      ++frames;
    }
  }
  EXPECT_TRUE(arrived) << frames << " frames read";
  EXPECT_EQ(sink.stats().reconnects, 0u);
  ::close(daemon);
  ::close(listener);
}

TEST(SyslogSinkFaults, TcpDaemonBackAfterAnOutageIsReachedWithinHalfASecond) {
  const uint16_t port = unusedPort(SOCK_STREAM);
  ASSERT_NE(port, 0);
  SyslogOptions options;  // the default back-off
  options.transport = SyslogOptions::kTcp;
  options.port = port;
  SyslogSink sink(options);
  const auto start = Clock::now();
  while (Clock::now() - start < milliseconds(800)) {
    sink.append("during\n", 7);
    std::this_thread::sleep_for(milliseconds(10));
  }
  const int listener = bindLoopbackWithin(SOCK_STREAM, port, 1000);
  ASSERT_GE(listener, 0) << "port " << port << " was taken meanwhile";
  const auto back = Clock::now();
  bool reached = false;
  while (!reached && Clock::now() - back < std::chrono::seconds(3)) {
    sink.append("after\n", 6);
    reached = readableWithin(listener, 10);
  }
  const auto late = Clock::now() - back;
  ASSERT_TRUE(reached);
  EXPECT_LT(late, milliseconds(500));
  ::close(listener);
}

class OverflowTest : public ::testing::TestWithParam<SyslogOptions::Overflow> {};

// The daemon is absent while 100 lines meet a queue of 10, then appears:
// what arrives is the 10 oldest or the 10 newest, as the option says, in
// order, and 90 count as dropped.
TEST_P(OverflowTest, AFullQueueDropsTheLinesTheOptionSays) {
  UnixDatagramReceiver daemon(false);
  SyslogOptions options;
  options.path = daemon.path();
  options.queueCapacity = 10;
  options.overflow = GetParam();
  options.firstRetryMs = 300;  // long enough to fill the queue meanwhile
  SyslogSink sink(options);
  sink.append("probe\n", 6);
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  while (sink.stats().lost == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  ASSERT_EQ(sink.stats().lost, 1u) << "the sender should be waiting to retry";
  for (int i = 0; i < 100; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    sink.append(line.data(), line.size());
  }
  ASSERT_TRUE(daemon.bind());
  std::vector<std::string> got;
  for (std::string m = daemon.receive(2000); !m.empty(); m = daemon.receive(200)) {
    if (has(m, " line ")) got.push_back(m.substr(m.find(" line ") + 1));
  }
  const int first = GetParam() == SyslogOptions::kDropOldest ? 90 : 0;
  std::vector<std::string> expected;
  for (int i = first; i < first + 10; ++i) expected.push_back("line " + std::to_string(i));
  EXPECT_EQ(got, expected);
  EXPECT_EQ(sink.stats().dropped, 90u);
}

INSTANTIATE_TEST_SUITE_P(Policies, OverflowTest,
                         ::testing::Values(SyslogOptions::kDropOldest, SyslogOptions::kDropNewest),
                         [](const ::testing::TestParamInfo<SyslogOptions::Overflow>& param) {
                           return param.param == SyslogOptions::kDropOldest ? "DropOldest"
                                                                            : "DropNewest";
                         });

}  // namespace
