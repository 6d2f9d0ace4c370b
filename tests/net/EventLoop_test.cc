#include "muon/net/EventLoop.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "EngineSupport.h"
#include "NetTestUtil.h"
#include "StderrLog.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoopThread.h"

using muon::net::Channel;
using muon::net::EventLoop;
using muon::net::EventLoopThread;
using muon::net::test::Clock;
using muon::net::test::runSync;
using muon::net::test::waitFor;
using muon::net::test::ScopedEnv;
using muon::test::logToStderr;


TEST(EventLoopDeathTest, SecondLoopInThreadAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        logToStderr();
        EventLoop first;
        EventLoop second;
      },
      "Another EventLoop .* exists in this thread");
}

TEST(EventLoopDeathTest, WrongThreadAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        logToStderr();
        EventLoop loop;
        std::thread([&loop] { loop.loop(); }).join();
      },
      "abortNotInLoopThread - EventLoop .* was created in threadId_ = [0-9]+, current thread id = [0-9]+");
}

TEST(EventLoopDeathTest, ChannelUpdateFromWrongThreadAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        logToStderr();
        EventLoop loop;
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) std::abort();
        Channel channel(&loop, fds[0]);
        std::thread([&channel] { channel.enableReading(); }).join();
      },
      "abortNotInLoopThread");
}

TEST(EventLoop, IsTheCurrentThreadsLoopOnlyWhileItLives) {
  EXPECT_EQ(EventLoop::getEventLoopOfCurrentThread(), nullptr);
  {
    EventLoop loop;
    EXPECT_EQ(EventLoop::getEventLoopOfCurrentThread(), &loop);
    EXPECT_TRUE(loop.isInLoopThread());
  }
  EXPECT_EQ(EventLoop::getEventLoopOfCurrentThread(), nullptr);
}

namespace {
// True while thread `tid` of this process sleeps in the poller's system call:
// /proc/self/task/TID/syscall starts with the number of the call a blocked
// thread is in ("running" while it runs).
bool blockedInPoll(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  long nr = -1;
  if (!(in >> nr)) return false;
  for (long pollCall : {
#ifdef SYS_epoll_wait
           static_cast<long>(SYS_epoll_wait),
#endif
#ifdef SYS_epoll_pwait2
           static_cast<long>(SYS_epoll_pwait2),
#endif
#ifdef SYS_poll
           static_cast<long>(SYS_poll),
#endif
#ifdef SYS_io_uring_enter
           static_cast<long>(SYS_io_uring_enter),  // the io_uring engine waits in it
#endif
           static_cast<long>(SYS_epoll_pwait), static_cast<long>(SYS_ppoll)}) {
    if (nr == pollCall) return true;
  }
  return false;
}
}  // namespace

// quit() alone must wake a loop blocked in poll. Nothing else may wake it
// here (a runInLoop would), so the loop is first seen asleep in the poller;
// without the wake-up it would sleep out the 10 s poll timeout.
TEST(EventLoop, QuitFromAnotherThread) {
  EventLoop loop;
  const int loopTid = muon::CurrentThread::tid();
  if (!std::ifstream("/proc/self/task/" + std::to_string(loopTid) + "/syscall")) {
    GTEST_SKIP() << "no /proc/self/task/TID/syscall: cannot see the loop block in poll";
  }
  std::promise<void> entered;
  // Queued before loop(): it runs in the first iteration, so the loop has
  // started when the promise is set.
  loop.queueInLoop([&] { entered.set_value(); });
  std::atomic<bool> sawBlocked{false};
  std::promise<Clock::time_point> quitAt;
  std::thread quitter([&] {
    entered.get_future().wait();
    sawBlocked = waitFor([&] { return blockedInPoll(loopTid); }, std::chrono::seconds(5));
    quitAt.set_value(Clock::now());
    loop.quit();
  });
  loop.loop();
  const Clock::time_point returned = Clock::now();
  quitter.join();
  ASSERT_TRUE(sawBlocked.load()) << "the loop thread was never seen blocked in poll";
  using std::chrono::milliseconds;
  const auto quitToReturn = std::chrono::duration_cast<milliseconds>(returned - quitAt.get_future().get());
  EXPECT_LT(quitToReturn.count(), 2000) << "ms from quit() to loop() returning";
}

TEST(EventLoop, QueueInLoopBeforeLoopStartsIsNotLost) {
  EventLoop loop;
  bool ran = false;
  loop.queueInLoop([&] {
    ran = true;
    loop.quit();
  });
  EXPECT_FALSE(ran);
  auto start = std::chrono::steady_clock::now();
  loop.loop();
  EXPECT_TRUE(ran);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(EventLoop, RunInLoopFromEightThreadsRunsEachFunctorOnce) {
  EventLoopThread loopThread;
  EventLoop* loop = loopThread.startLoop();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  // Loop-thread only: each sender's functors, in arrival order.
  std::vector<std::vector<int>> seen(kThreads);
  std::atomic<int> total{0};
  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        loop->runInLoop([&, t, i] {
          seen[static_cast<size_t>(t)].push_back(i);
          total.fetch_add(1);
        });
      }
    });
  }
  for (auto& s : senders) s.join();
  ASSERT_TRUE(waitFor([&] { return total.load() == kThreads * kPerThread; }));
  runSync(loop, [&] {
    for (int t = 0; t < kThreads; ++t) {
      const auto& v = seen[static_cast<size_t>(t)];
      ASSERT_EQ(v.size(), static_cast<size_t>(kPerThread));
      for (int i = 0; i < kPerThread; ++i) ASSERT_EQ(v[static_cast<size_t>(i)], i);
    }
  });
  EXPECT_EQ(total.load(), kThreads * kPerThread);
}

TEST(EventLoop, FunctorsQueuedBeforeQuitStillRun) {
  std::atomic<int> count{0};
  {
    EventLoopThread loopThread;
    EventLoop* loop = loopThread.startLoop();
    for (int i = 0; i < 1000; ++i) loop->queueInLoop([&] { count.fetch_add(1); });
    // The destructor quits and joins.
  }
  EXPECT_EQ(count.load(), 1000);
}

// A callback removes (and destroys) another channel that is ready in the
// same poll: the removed channel's callback must not run.
TEST(EventLoop, ChannelRemovedByEarlierCallbackOfSameIterationIsSkipped) {
  EventLoop loop;
  int a[2], b[2];
  ASSERT_EQ(::pipe2(a, O_CLOEXEC | O_NONBLOCK), 0);
  ASSERT_EQ(::pipe2(b, O_CLOEXEC | O_NONBLOCK), 0);
  auto chA = std::make_unique<Channel>(&loop, a[0]);
  auto chB = std::make_unique<Channel>(&loop, b[0]);
  int calls = 0;
  // Whichever runs first removes and destroys the other.
  chA->setReadCallback([&](muon::Timestamp) {
    ++calls;
    chB->disableAll();
    chB->remove();
    chB.reset();
    loop.quit();
  });
  chB->setReadCallback([&](muon::Timestamp) {
    ++calls;
    chA->disableAll();
    chA->remove();
    chA.reset();
    loop.quit();
  });
  chA->enableReading();
  chB->enableReading();
  ASSERT_EQ(::write(a[1], "x", 1), 1);
  ASSERT_EQ(::write(b[1], "x", 1), 1);
  loop.loop();
  EXPECT_EQ(calls, 1);
  if (chA) {
    chA->disableAll();
    chA->remove();
  }
  if (chB) {
    chB->disableAll();
    chB->remove();
  }
  for (int fd : {a[0], a[1], b[0], b[1]}) ::close(fd);
}

TEST(EventLoop, IdleLoopDoesNotSpin) {
  EventLoop loop;
  loop.runAfter(0.05, [&] { loop.quit(); });
  loop.loop();
  // One poll for the timer (maybe one more for a wake-up), not thousands.
  EXPECT_LE(loop.iteration(), 3);
}

// Busy polling, on each engine (the Options name it, whatever the
// environment says).
class BusyPoll : public ::testing::TestWithParam<EventLoop::Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == EventLoop::Engine::kUring) {
      std::string reason = muon::net::test::uringUnavailableReason();
      if (!reason.empty()) GTEST_SKIP() << "io_uring unavailable: " << reason;
    }
  }
  EventLoop::Options options(int busyPollMicros) const {
    EventLoop::Options o;
    o.engine = GetParam();
    o.busyPollMicros = busyPollMicros;
    return o;
  }
};

namespace {
// A loop running in its own thread. It is destroyed only when this object
// is, so the test thread's calls (quit() included) never reach a dead loop.
class LoopThread {
 public:
  explicit LoopThread(const EventLoop::Options& options)
      : thread_([this, options] {
          EventLoop loop(options);
          made_.set_value(&loop);
          loop.loop();
          returned_ = true;
          mayDestroy_.get_future().wait();
        }),
        loop_(made_.get_future().get()) {}
  ~LoopThread() {
    loop_->quit();
    mayDestroy_.set_value();
    thread_.join();
  }
  EventLoop* loop() const { return loop_; }
  bool returned() const { return returned_.load(); }

 private:
  std::promise<EventLoop*> made_;
  std::promise<void> mayDestroy_;
  std::atomic<bool> returned_{false};
  std::thread thread_;
  EventLoop* const loop_;
};
}  // namespace

// A loop inside its busy-poll window spins (polls without sleeping), and
// quit() from another thread still stops it at once, long before the
// window ends.
TEST_P(BusyPoll, QuitFromAnotherThreadStopsASpinningLoop) {
  LoopThread thread(options(60 * 1000 * 1000));  // a minute of spinning
  EventLoop* loop = thread.loop();
  EXPECT_EQ(loop->engine(), GetParam());
  EXPECT_EQ(loop->options().busyPollMicros, 60 * 1000 * 1000);
  runSync(loop, [] {});  // an event: the window opens
  // Spinning: a thousand polls with no event at all (a sleeping loop would
  // make none).
  const int64_t before = loop->iteration();
  EXPECT_TRUE(waitFor([&] { return loop->iteration() - before > 1000; }, std::chrono::seconds(5)))
      << "not spinning";
  loop->quit();
  EXPECT_TRUE(waitFor([&] { return thread.returned(); }, std::chrono::milliseconds(500)))
      << "loop() did not return within 500 ms of quit()";
}

// Timers fire on time while the loop spins: a spinning turn polls the
// timerfd like a blocking one. (A loop that did not would be late by its
// whole window, a minute here; the bound leaves room for a loaded machine.)
TEST_P(BusyPoll, TimersFireOnTimeWhileSpinning) {
  LoopThread thread(options(60 * 1000 * 1000));
  EventLoop* loop = thread.loop();
  runSync(loop, [] {});  // an event: the window opens
  std::promise<Clock::time_point> fired;
  const auto start = Clock::now();
  loop->runAfter(0.05, [&] { fired.set_value(Clock::now()); });
  const auto late = fired.get_future().get() - start - std::chrono::milliseconds(50);
  EXPECT_GE(late.count(), 0);
  EXPECT_LT(late, std::chrono::milliseconds(500));
}

// Once the window has passed without events the loop sleeps again: its
// iteration count stands still.
TEST_P(BusyPoll, TheLoopSleepsAfterTheWindow) {
  LoopThread thread(options(30 * 1000));  // 30 ms
  EventLoop* loop = thread.loop();
  runSync(loop, [] {});  // the last event; its window ends 30 ms later
  // A spinning loop polls thousands of times in 50 ms; a sleeping one not at
  // all. (Polled rather than timed once: on a loaded machine the loop thread
  // may be descheduled inside its window and finish it late.)
  const bool settled = waitFor(
      [&] {
        const int64_t before = loop->iteration();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return loop->iteration() == before;
      },
      std::chrono::seconds(5));
  EXPECT_TRUE(settled) << "the loop kept polling after its window";
}

INSTANTIATE_TEST_SUITE_P(Engines, BusyPoll,
                         ::testing::Values(EventLoop::Engine::kEpoll, EventLoop::Engine::kPoll,
                                           EventLoop::Engine::kUring),
                         [](const ::testing::TestParamInfo<EventLoop::Engine>& p) {
                           switch (p.param) {
                             case EventLoop::Engine::kEpoll: return std::string("epoll");
                             case EventLoop::Engine::kPoll: return std::string("poll");
                             case EventLoop::Engine::kUring: return std::string("uring");
                             default: return std::string("environment");
                           }
                         });

// MUON_BUSY_POLL_US sets the default; an explicit option wins; junk is 0.
TEST(BusyPoll, EnvironmentSetsTheDefault) {
  {
    ScopedEnv env("MUON_BUSY_POLL_US", "250");
    EventLoop loop;
    EXPECT_EQ(loop.options().busyPollMicros, 250);
  }
  {
    ScopedEnv env("MUON_BUSY_POLL_US", "250");
    EventLoop::Options o;
    o.busyPollMicros = 0;
    EventLoop loop(o);
    EXPECT_EQ(loop.options().busyPollMicros, 0);
  }
  {
    ScopedEnv env("MUON_BUSY_POLL_US", "lots");
    EventLoop loop;
    EXPECT_EQ(loop.options().busyPollMicros, 0);
  }
  {
    ScopedEnv env("MUON_BUSY_POLL_US", nullptr);
    EventLoop loop;
    EXPECT_EQ(loop.options().busyPollMicros, 0);
  }
}
