// socks4a_server: 8 MiB relayed each way at once through the proxy to a
// destination in this process; either side going away closes the other;
// a request that is not CONNECT is refused.
#include <arpa/inet.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "NetTestUtil.h"
#include "ReadUntil.h"

using namespace muon::net::test;
using muon::test::ChildProgram;

namespace {

constexpr size_t kBytes = 8 << 20;
constexpr size_t kHighWaterKiB = 256;
// Small receive buffers at both ends, so the kernel cannot absorb what the
// proxy must hold back.
constexpr int kReceiveBuffer = 64 * 1024;

void shrinkReceiveBuffer(int fd) {
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kReceiveBuffer, sizeof kReceiveBuffer);
}

// A listening socket on loopback, port from the kernel.
class Destination {
 public:
  Destination() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    shrinkReceiveBuffer(fd_);  // accepted sockets inherit it
    const muon::net::InetAddress addr = loopback(0);
    ::bind(fd_, addr.getSockAddr(), addr.sockLen());
    ::listen(fd_, 4);
    struct sockaddr_in bound {};
    socklen_t len = sizeof bound;
    ::getsockname(fd_, reinterpret_cast<struct sockaddr*>(&bound), &len);
    port_ = ntohs(bound.sin_port);
  }
  ~Destination() { ::close(fd_); }
  uint16_t port() const { return port_; }
  // The next connection, or -1 after 20 s.
  int accept() { return waitReadable(fd_, 20000) ? ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC) : -1; }

 private:
  const int fd_;
  uint16_t port_;
};

// A SOCKS4 request: version 4, command, port, IPv4 address, user id, NUL.
std::string request(char command, uint16_t port, const char* ip) {
  std::string r = {4, command, static_cast<char>(port >> 8), static_cast<char>(port & 0xff)};
  uint32_t addr = 0;
  ::inet_pton(AF_INET, ip, &addr);
  r.append(reinterpret_cast<const char*>(&addr), 4);
  r += "reader";
  r += '\0';
  return r;
}

// Connects through the proxy; returns the client's socket and sets *status
// to the reply's status byte (0 if no reply).
int connectThrough(uint16_t proxyPort, const std::string& req, char* status) {
  *status = 0;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  shrinkReceiveBuffer(fd);
  const muon::net::InetAddress proxy = loopback(proxyPort);
  if (::connect(fd, proxy.getSockAddr(), proxy.sockLen()) != 0) return fd;
  if (!writeAll(fd, req.data(), req.size())) return fd;
  const std::string reply = readExactly(fd, 8);
  if (reply.size() == 8) *status = reply[1];
  return fd;
}

// The peaks the proxy logged when the client left: {to client, to destination}.
std::pair<long, long> peaksOf(const std::string& output) {
  const std::string marker = "peak output buffer to client ";
  const size_t at = output.find(marker);
  if (at == std::string::npos) return {-1, -1};
  const char* p = output.c_str() + at + marker.size();
  char* end = nullptr;
  const long toClient = std::strtol(p, &end, 10);
  return {toClient, std::strtol(end + std::strlen(", to destination "), nullptr, 10)};
}

// One proxy (256 KiB high-water mark, 0.2 s to connect) and one
// destination per test.
class Socks4aServer : public ::testing::Test {
 protected:
  void SetUp() override {
    proxyPort_ = proxy_.port();
    ASSERT_NE(proxyPort_, 0);
    idleFds_ = proxy_.openFds();
  }
  void TearDown() override { EXPECT_TRUE(proxy_.stopsCleanly()); }

  // A CONNECT to the destination through the proxy, granted and accepted:
  // sets *client and *upstream (the destination's end).
  void openTunnel(int* client, int* upstream) {
    char status;
    *client = connectThrough(proxyPort_, request(1, destination_.port(), "127.0.0.1"), &status);
    ASSERT_EQ(status, 0x5A);
    *upstream = destination_.accept();
    ASSERT_GE(*upstream, 0);
  }
  // True once the proxy holds no connection (20 s at most).
  bool proxyIsIdle() {
    const bool idle = proxy_.waitForOpenFds(idleFds_);
    if (!idle) ADD_FAILURE() << proxy_.openFds() << " descriptors open, " << idleFds_ << " when idle";
    return idle;
  }

  ChildProgram proxy_{"socks4a_server", {"0", std::to_string(kHighWaterKiB), "0.2"}};
  uint16_t proxyPort_ = 0;
  int idleFds_ = 0;
  Destination destination_;
};

}  // namespace

TEST_F(Socks4aServer, RelaysEightMiBEachWayAndClosesTheOtherSide) {
  int client, upstream;
  openTunnel(&client, &upstream);

  const std::string down = makePattern(kBytes, 11), up = makePattern(kBytes, 12);
  std::string gotAtDestination, gotAtClient;
  // Both ends write at once and read only once the proxy has paused
  // reading in both directions (it logs each pause at once).
  std::thread destinationWriter([&] { writeAll(upstream, down.data(), down.size()); });
  std::thread clientWriter([&] { writeAll(client, up.data(), up.size()); });
  const bool pausedBothWays = proxy_.waitForOutput("output buffer to client at ") &&
                              proxy_.waitForOutput("output buffer to destination at ");
  std::thread destinationReader([&] { gotAtDestination = readExactly(upstream, kBytes); });
  gotAtClient = readExactly(client, kBytes);
  destinationReader.join();
  clientWriter.join();
  destinationWriter.join();
  EXPECT_TRUE(pausedBothWays) << proxy_.output();
  EXPECT_TRUE(gotAtClient == down);
  EXPECT_TRUE(gotAtDestination == up);

  // The client goes away: the destination sees the end of the stream, and
  // once it closes too the proxy has let go of both sockets.
  ::close(client);
  EXPECT_TRUE(readsEof(upstream));
  ::close(upstream);
  EXPECT_TRUE(proxyIsIdle());

  // And the other way round.
  int client2, upstream2;
  openTunnel(&client2, &upstream2);
  ASSERT_TRUE(writeAll(upstream2, "bye", 3));
  ::close(upstream2);
  EXPECT_EQ(readExactly(client2, 3), "bye");
  EXPECT_TRUE(readsEof(client2));
  ::close(client2);
  EXPECT_TRUE(proxyIsIdle());
  ASSERT_TRUE(proxy_.stopsCleanly());

  // Flow control: each output buffer stopped near the high-water mark
  // (reading stops when the callback runs, after the current batch of
  // events: a read or two more may land, up to an input buffer each).
  const auto peaks = peaksOf(proxy_.output());
  const long mark = kHighWaterKiB * 1024;
  EXPECT_GE(peaks.first, mark);
  EXPECT_GE(peaks.second, mark);
  EXPECT_LT(peaks.first, mark + (1 << 20)) << proxy_.output();
  EXPECT_LT(peaks.second, mark + (1 << 20)) << proxy_.output();
}

// One side floods the proxy while the other does not read, until the
// proxy pauses reading the flooding side; then the quiet side goes away.
// The flooding side must still see the end, and once it closes, the proxy
// must notice (it has to read again to see that) and let go of both.
TEST_F(Socks4aServer, ASideLeavingWhileTheOtherIsPausedClosesBoth) {
  const std::string flood = makePattern(kBytes, 13);
  for (const bool clientFloods : {true, false}) {
    SCOPED_TRACE(clientFloods ? "client floods" : "destination floods");
    int client, upstream;
    openTunnel(&client, &upstream);
    const int flooder = clientFloods ? client : upstream;
    const int quiet = clientFloods ? upstream : client;
    std::thread writer([&] { writeAll(flooder, flood.data(), flood.size()); });
    const std::string paused = clientFloods ? "output buffer to destination at " : "output buffer to client at ";
    EXPECT_TRUE(proxy_.waitForOutput(paused)) << proxy_.output();
    ::close(quiet);  // unread data: a reset
    EXPECT_EQ(readUntilEof(flooder), "");
    ::shutdown(flooder, SHUT_RDWR);  // ends the writer, blocked or not
    writer.join();
    ::close(flooder);
    EXPECT_TRUE(proxyIsIdle());
  }
}

TEST_F(Socks4aServer, SOCKS4aNamesAreResolved) {
  std::string req = request(1, destination_.port(), "0.0.0.1");
  req += "localhost";
  req += '\0';
  req += "early";  // sent before the reply: relayed once connected
  char status;
  const int client = connectThrough(proxyPort_, req, &status);
  ASSERT_EQ(status, 0x5A);
  const int upstream = destination_.accept();
  ASSERT_GE(upstream, 0);
  EXPECT_EQ(readExactly(upstream, 5), "early");
  ::close(upstream);
  ::close(client);
}

TEST_F(Socks4aServer, RefusesWhatIsNotConnect) {
  char status;
  const int client = connectThrough(proxyPort_, request(2, 80, "127.0.0.1"), &status);  // BIND
  EXPECT_EQ(status, 0x5B);
  EXPECT_TRUE(readsEof(client));
  ::close(client);
  EXPECT_TRUE(proxyIsIdle());
}

TEST_F(Socks4aServer, ADestinationThatDoesNotAnswerIsRefusedAndTheClientReleased) {
  char status;
  const int client = connectThrough(proxyPort_, request(1, unusedPort(), "127.0.0.1"), &status);
  EXPECT_EQ(status, 0x5B);  // after the 0.2 s connect timeout
  EXPECT_EQ(readUntilEof(client), "");
  ASSERT_TRUE(writeAll(client, "ignored", 7));  // read and dropped by the proxy
  ::close(client);
  EXPECT_TRUE(proxyIsIdle());
}
