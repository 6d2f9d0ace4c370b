// Timers: EventLoop::runAt / runAfter / runEvery / cancel.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "NetTestUtil.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThread.h"

using muon::Timestamp;
using muon::net::EventLoop;
using muon::net::EventLoopThread;
using muon::net::TimerId;
using muon::net::test::runSync;

namespace {
void busyWait(std::chrono::milliseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}
}  // namespace

TEST(Timer, FireInDeadlineOrder) {
  EventLoop loop;
  std::vector<int> order;
  const Timestamp base = Timestamp::now();
  loop.runAt(addTime(base, 0.030), [&] {
    order.push_back(30);
    loop.quit();
  });
  loop.runAt(addTime(base, 0.010), [&] { order.push_back(10); });
  loop.runAt(addTime(base, 0.020), [&] { order.push_back(20); });
  loop.runAfter(0, [&] { order.push_back(0); });
  loop.runAfter(0.015 - timeDifference(Timestamp::now(), base), [&] { order.push_back(15); });
  loop.loop();
  EXPECT_EQ(order, (std::vector<int>{0, 10, 15, 20, 30}));
}

TEST(Timer, SameDeadlineKeepsCreationOrder) {
  EventLoop loop;
  std::vector<int> order;
  loop.queueInLoop([&] {
    for (int i = 0; i < 5; ++i) loop.runAfter(0.001, [&order, i] { order.push_back(i); });
    busyWait(std::chrono::milliseconds(5));  // all expire before the next poll
  });
  loop.runAfter(0.02, [&] { loop.quit(); });
  loop.loop();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(Timer, RunAtInThePastFiresAtOnce) {
  EventLoop loop;
  bool fired = false;
  loop.runAt(Timestamp::fromUnixTime(1), [&] {
    fired = true;
    loop.quit();
  });
  auto start = std::chrono::steady_clock::now();
  loop.loop();
  EXPECT_TRUE(fired);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Timer, RunAtTheEarliestTimeFiresAtOnceAndTheLatestNever) {
  EventLoop loop;
  bool earliest = false, latest = false;
  loop.runAt(Timestamp(INT64_MIN), [&] { earliest = true; });
  loop.runAt(Timestamp(INT64_MAX), [&] { latest = true; });
  loop.runAfter(0.01, [&] { loop.quit(); });
  loop.loop();
  EXPECT_TRUE(earliest);
  EXPECT_FALSE(latest);
}

TEST(Timer, RunEveryRepeats) {
  EventLoop loop;
  int count = 0;
  TimerId id;
  id = loop.runEvery(0.002, [&] {
    if (++count == 5) {
      loop.cancel(id);
      loop.runAfter(0.02, [&] { loop.quit(); });  // would see a sixth firing
    }
  });
  // A timer that stops repeating must fail the count, not hang the test.
  loop.runAfter(5.0, [&] { loop.quit(); });
  loop.loop();
  EXPECT_EQ(count, 5);
}

TEST(Timer, CancelInsideOwnCallbackNeverFiresAgain) {
  EventLoop loop;
  int count = 0;
  TimerId id;
  id = loop.runEvery(0.001, [&] {
    ++count;
    loop.cancel(id);
  });
  loop.runAfter(0.03, [&] { loop.quit(); });
  loop.loop();
  EXPECT_EQ(count, 1);
}

TEST(Timer, CancelAnotherTimerOfSameBatchFromCallback) {
  EventLoop loop;
  int aFired = 0, bFired = 0, cFired = 0;
  TimerId b, c;
  loop.queueInLoop([&] {
    // a, b and c all expire before the next poll, so they run in one batch.
    loop.runAfter(0.001, [&] {
      ++aFired;
      loop.cancel(b);  // one-shot, already expired: must not run
      loop.cancel(c);  // repeating, already expired
    });
    b = loop.runAfter(0.001, [&] { ++bFired; });
    c = loop.runEvery(0.001, [&] { ++cFired; });
    busyWait(std::chrono::milliseconds(5));
  });
  loop.runAfter(0.03, [&] { loop.quit(); });
  loop.loop();
  EXPECT_EQ(aFired, 1);
  EXPECT_EQ(bFired, 0);
  EXPECT_EQ(cFired, 0);
}

TEST(Timer, CancelBeforeExpiry) {
  EventLoop loop;
  bool fired = false;
  TimerId id = loop.runAfter(0.01, [&] { fired = true; });
  loop.cancel(id);
  loop.cancel(id);         // twice is harmless
  loop.cancel(TimerId());  // so is an empty id
  loop.runAfter(0.03, [&] { loop.quit(); });
  loop.loop();
  EXPECT_FALSE(fired);
}

TEST(Timer, AddAndCancelFromAnotherThread) {
  EventLoopThread loopThread;
  EventLoop* loop = loopThread.startLoop();
  std::atomic<int> count{0};
  TimerId id = loop->runEvery(0.001, [&] { count.fetch_add(1); });
  ASSERT_TRUE(muon::net::test::waitFor([&] { return count.load() >= 3; }));
  loop->cancel(id);
  int atCancel = runSync(loop, [&] { return count.load(); });  // cancel has run
  std::promise<void> later;
  loop->runAfter(0.02, [&] { later.set_value(); });
  later.get_future().wait();
  EXPECT_EQ(count.load(), atCancel);
}

TEST(Timer, ManyTimersInterleaved) {
  EventLoop loop;
  std::vector<int> fired;
  // Absolute times from one base, so slow adding (sanitizers) cannot reorder them.
  const Timestamp base = Timestamp::now();
  for (int i = 19; i >= 0; --i) loop.runAt(addTime(base, 0.001 * i), [&fired, i] { fired.push_back(i); });
  loop.runAfter(0.04, [&] { loop.quit(); });
  loop.loop();
  ASSERT_EQ(fired.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(fired[static_cast<size_t>(i)], i);
}

// A wall-clock jump cannot be made in a test without disturbing the whole
// machine, so check what makes timers immune to it: the loop's timerfd is
// on CLOCK_MONOTONIC and armed with an absolute deadline.
TEST(Timer, TimerfdIsMonotonicAndAbsolute) {
  EventLoop loop;
  loop.runAfter(100, [] {});  // armed, never reached
  int found = 0;
  for (int fd = 0; fd < 1024; ++fd) {
    char target[64] = "";
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0 || std::string(target, static_cast<size_t>(n)) != "anon_inode:[timerfd]") continue;
    std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
    std::string text((std::istreambuf_iterator<char>(info)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("clockid: 1\n"), std::string::npos) << text;  // CLOCK_MONOTONIC
    EXPECT_NE(text.find("settime flags: 01\n"), std::string::npos) << text;  // TFD_TIMER_ABSTIME
    ++found;
  }
  EXPECT_EQ(found, 1);
}
