// EventLoopThreadPool: how connections are spread over the loops.
#include "muon/net/EventLoopThreadPool.h"

#include <atomic>
#include <vector>

#include <gtest/gtest.h>

#include "muon/net/EventLoop.h"

using muon::net::EventLoop;
using muon::net::EventLoopThreadPool;

TEST(EventLoopThreadPool, RoundRobinAndHash) {
  EventLoop base;
  EventLoopThreadPool pool(&base, "pool");
  pool.setThreadNum(3);
  std::atomic<int> inits{0};
  pool.start([&](EventLoop* loop) {
    EXPECT_TRUE(loop->isInLoopThread());
    inits.fetch_add(1);
  });
  EXPECT_EQ(inits.load(), 3);
  std::vector<EventLoop*> loops = pool.getAllLoops();
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_NE(loops[0], loops[1]);
  EXPECT_NE(loops[1], loops[2]);
  for (int round = 0; round < 2; ++round) {
    for (EventLoop* expected : loops) EXPECT_EQ(pool.getNextLoop(), expected);
  }
  EXPECT_EQ(pool.getLoopForHash(7), pool.getLoopForHash(7));
  EXPECT_EQ(pool.getLoopForHash(7), loops[1]);
  EXPECT_NE(pool.getLoopForHash(7), pool.getLoopForHash(8));
}

TEST(EventLoopThreadPool, ZeroThreadsUsesBaseLoop) {
  EventLoop base;
  EventLoopThreadPool pool(&base, "none");
  EventLoop* initLoop = nullptr;
  pool.start([&](EventLoop* loop) { initLoop = loop; });
  EXPECT_EQ(initLoop, &base);
  EXPECT_EQ(pool.getNextLoop(), &base);
  EXPECT_EQ(pool.getLoopForHash(99), &base);
}

// A server's I/O loops run on its base loop's engine and busy-poll setting,
// whatever the environment says.
TEST(EventLoopThreadPool, IoLoopsTakeTheBaseLoopsOptions) {
  EventLoop::Options options;
  options.engine = EventLoop::Engine::kPoll;
  options.busyPollMicros = 7;
  EventLoop base(options);
  EventLoopThreadPool pool(&base, "options");
  pool.setThreadNum(2);
  pool.start(EventLoopThreadPool::ThreadInitCallback());
  for (EventLoop* loop : pool.getAllLoops()) {
    EXPECT_EQ(loop->engine(), EventLoop::Engine::kPoll);
    EXPECT_EQ(loop->options().busyPollMicros, 7);
  }
}
