// Connector: the retry back-off when nothing listens (label `fault`).
#include "muon/net/internal/Connector.h"

#include <unistd.h>

#include <memory>

#include <gtest/gtest.h>

#include "LogCapture.h"
#include "NetTestUtil.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThread.h"

using namespace muon::net;
using namespace muon::net::test;
using muon::test::LogCapture;

// The defaults the issue asks for: the first retry after 500 ms, doubling,
// never more than 30 s. Checked through the next delay the connector has
// computed after a refused attempt, so nothing waits for the delays.
TEST(ConnectorFault, DefaultBackOffStartsAt500MsDoublesAndIsCappedAt30s) {
  static_assert(Connector::kDefaultInitRetryDelayMs == 500, "first delay");
  static_assert(Connector::kDefaultMaxRetryDelayMs == 30 * 1000, "cap");
  LogCapture logs(muon::Logger::DEBUG);  // the retries are DEBUG lines
  EventLoopThread thread;
  EventLoop* loop = thread.startLoop();
  const InetAddress closed = loopback(unusedPort());
  auto connector = std::make_shared<Connector>(loop, closed);
  connector->setNewConnectionCallback([](int fd) { ::close(fd); });
  EXPECT_EQ(connector->currentRetryDelayMs(), 500);
  connector->start();
  ASSERT_TRUE(waitFor([] { return LogCapture::contains("in 500 milliseconds"); }));
  EXPECT_EQ(runSync(loop, [&] { return connector->currentRetryDelayMs(); }), 1000);
  connector->stop();
  runSync(loop, [] {});

  // A first delay of 20 s with the default cap: the next is 30 s, not 40 s.
  auto capped = std::make_shared<Connector>(loop, closed);
  capped->setNewConnectionCallback([](int fd) { ::close(fd); });
  capped->setRetryDelayMs(20 * 1000, Connector::kDefaultMaxRetryDelayMs);
  capped->start();
  ASSERT_TRUE(waitFor([] { return LogCapture::contains("in 20000 milliseconds"); }));
  EXPECT_EQ(runSync(loop, [&] { return capped->currentRetryDelayMs(); }), 30 * 1000);
  capped->stop();
  runSync(loop, [] {});
  runSync(loop, [] {});
}
