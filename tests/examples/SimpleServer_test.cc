// simple_server: discard, daytime, time, echo and chargen, each checked
// against its RFC over loopback.
#include <ctime>
#include <string>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "NetTestUtil.h"
#include "PosixRegex.h"
#include "ReadUntil.h"

using namespace muon::net::test;
using muon::test::ChildProgram;

namespace {

// One simple_server per test; connect(name) opens a connection to one of
// its services (-1 if that fails). TearDown checks the clean stop.
class SimpleServer : public ::testing::Test {
 protected:
  int connect(const std::string& service) {
    const uint16_t port = server_.port(service);
    return port == 0 ? -1 : connectTo(loopback(port));
  }
  // Stopping twice is harmless: the second finds it gone, status 0.
  void TearDown() override { EXPECT_TRUE(server_.stopsCleanly()); }

  ChildProgram server_{"simple_server", {"0"}};
};

}  // namespace

TEST_F(SimpleServer, DiscardCountsAndDropsEverything) {
  const int fd = connect("discard");
  ASSERT_GE(fd, 0);
  const std::string data = makePattern(100000);
  ASSERT_TRUE(writeAll(fd, data.data(), data.size()));
  ::shutdown(fd, SHUT_WR);
  EXPECT_EQ(readUntilEof(fd), "");  // nothing comes back; the server closes after our FIN
  ::close(fd);
  // Log lines reach the file at exit (stdout is not a terminal).
  ASSERT_TRUE(server_.stopsCleanly());
  EXPECT_EQ(server_.count("discarded 100000 bytes"), 1u) << server_.output();
}

TEST_F(SimpleServer, DaytimeSendsOneLineAndCloses) {
  const int fd = connect("daytime");
  ASSERT_GE(fd, 0);
  const std::string line = readUntilEof(fd);
  ::close(fd);
  EXPECT_TRUE(muon::test::PosixRegex("[0-9]{8} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC\n").fullMatch(line)) << line;
}

TEST_F(SimpleServer, TimeSendsFourBigEndianBytesOfNow) {
  const int fd = connect("time");
  ASSERT_GE(fd, 0);
  const std::string reply = readUntilEof(fd);
  ::close(fd);
  ASSERT_EQ(reply.size(), 4u);
  uint32_t seconds = 0;
  for (char c : reply) seconds = seconds << 8 | static_cast<unsigned char>(c);
  const auto now = static_cast<uint32_t>(std::time(nullptr));
  EXPECT_LE(seconds, now);
  EXPECT_GE(seconds + 5, now);
}

TEST_F(SimpleServer, EchoSendsBackEveryByte) {
  const int fd = connect("echo");
  ASSERT_GE(fd, 0);
  const std::string data = makePattern(256 * 1024, 7);
  std::thread writer([&] { writeAll(fd, data.data(), data.size()); });
  const std::string back = readExactly(fd, data.size());
  writer.join();
  ::close(fd);
  EXPECT_TRUE(back == data);
}

TEST_F(SimpleServer, ChargenSendsTheRotatingPatternForAsLongAsWeRead) {
  const int fd = connect("chargen");
  ASSERT_GE(fd, 0);
  // More than one block (95 lines of 74 bytes): the next block followed.
  const size_t lines = 300;
  const std::string data = readExactly(fd, lines * 74);
  ::close(fd);
  ASSERT_EQ(data.size(), lines * 74);
  std::string ring;
  for (char c = 33; c < 127; ++c) ring += c;
  ring += ' ';
  for (size_t line = 0; line < lines; ++line) {
    std::string expected;
    for (size_t i = 0; i < 72; ++i) expected += ring[(line + i) % ring.size()];
    expected += "\r\n";
    ASSERT_EQ(data.substr(line * 74, 74), expected) << "line " << line;
  }
}
