// finger_server: a known user's plan, "No such user", one query per
// connection, and a client that never ends its line is cut off.
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "NetTestUtil.h"
#include "ReadUntil.h"

using namespace muon::net::test;
using muon::test::ChildProgram;

namespace {

// Sends `query` and returns everything until the server closes.
std::string finger(uint16_t port, const std::string& query) {
  const int fd = connectTo(loopback(port));
  if (fd < 0) return "connect failed";
  writeAll(fd, query.data(), query.size());
  const std::string reply = readUntilEof(fd);
  ::close(fd);
  return reply;
}

}  // namespace

TEST(FingerServer, AnswersWithThePlanAndCloses) {
  ChildProgram server("finger_server", {"0", "schen=Write the book.", "muon=Keep the lines."});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  EXPECT_EQ(finger(port, "schen\r\n"), "Write the book.\r\n");
  EXPECT_EQ(finger(port, "muon\r\n"), "Keep the lines.\r\n");
  EXPECT_EQ(finger(port, "nobody\r\n"), "No such user\r\n");
  EXPECT_TRUE(server.stopsCleanly());
}

TEST(FingerServer, ALineWithoutEndIsCutOff) {
  ChildProgram server("finger_server", {"0"});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  const int fd = connectTo(loopback(port));
  ASSERT_GE(fd, 0);
  const std::string junk(4096, 'x');
  writeAll(fd, junk.data(), junk.size());
  EXPECT_TRUE(readsEof(fd) || errno == ECONNRESET);
  ::close(fd);
  EXPECT_TRUE(server.stopsCleanly());
}
