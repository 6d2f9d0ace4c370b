// maxconn_server: with MAX 2, the third client is closed at once, and once
// a client leaves a new one is served.
#include <unistd.h>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "NetTestUtil.h"

using namespace muon::net::test;
using muon::test::ChildProgram;

namespace {

// True if fd echoes a byte.
bool echoes(int fd) { return writeAll(fd, "e", 1) && readExactly(fd, 1) == "e"; }

}  // namespace

TEST(MaxConnServer, RefusesTheConnectionOverTheLimit) {
  ChildProgram server("maxconn_server", {"0", "2"});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  const int first = connectTo(loopback(port));
  const int second = connectTo(loopback(port));
  ASSERT_TRUE(echoes(first));
  ASSERT_TRUE(echoes(second));
  const int third = connectTo(loopback(port));
  ASSERT_GE(third, 0);  // accepted by the kernel, then closed by the server
  EXPECT_TRUE(readsEof(third));
  ::close(third);
  EXPECT_TRUE(echoes(first));  // the others are untouched
  EXPECT_TRUE(echoes(second));

  // A place frees up when a client leaves; the server learns it when it
  // reads our FIN, so a client that connects right after may still be
  // refused: try until one is served.
  ::close(first);
  bool served = false;
  for (int attempt = 0; attempt < 200 && !served; ++attempt) {
    const int fd = connectTo(loopback(port));
    served = echoes(fd);
    if (served) {
      ::close(second);
      EXPECT_TRUE(echoes(fd));
    }
    ::close(fd);
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(served);
  EXPECT_TRUE(server.stopsCleanly());
}
