// The io_uring engine: how it is chosen, its fallback to epoll, and the
// readiness channels on it. (The whole net suite also runs on it, as
// uring.*: tests/net/CMakeLists.txt.)
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "EngineSupport.h"
#include "LogCapture.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"

using muon::net::Channel;
using muon::net::EventLoop;
using muon::net::test::ScopedEnv;

namespace {

EventLoop::Options uringOptions() {
  EventLoop::Options o;
  o.engine = EventLoop::Engine::kUring;
  return o;
}

#define SKIP_WITHOUT_URING()                                                    \
  do {                                                                          \
    std::string reason = muon::net::test::uringUnavailableReason();             \
    if (!reason.empty()) GTEST_SKIP() << "io_uring unavailable: " << reason;    \
  } while (0)

// Makes io_uring_setup fail with EPERM in this process from now on, as a
// container's seccomp profile does.
bool forbidIoUringSetup() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

}  // namespace

TEST(UringPoller, OptionSelectsIoUring) {
  SKIP_WITHOUT_URING();
  EventLoop loop(uringOptions());
  EXPECT_EQ(loop.engine(), EventLoop::Engine::kUring);
  EXPECT_STREQ(loop.engineName(), "io_uring");
}

// What the environment asks for is what the loop runs on; this is what makes
// the uring.* and poll.* runs of the suite mean something.
TEST(UringPoller, EnvironmentSelectsTheEngine) {
  const char* uring = std::getenv("MUON_USE_URING");
  const bool wantUring = uring != nullptr && std::string(uring) == "1";
  const bool wantPoll = std::getenv("MUON_USE_POLL") != nullptr;
  if (wantUring && !wantPoll) SKIP_WITHOUT_URING();
  EventLoop loop;
  EXPECT_EQ(loop.engine(), wantPoll    ? EventLoop::Engine::kPoll
                           : wantUring ? EventLoop::Engine::kUring
                                       : EventLoop::Engine::kEpoll);
  {
    ScopedEnv poll("MUON_USE_POLL", nullptr);
    ScopedEnv on("MUON_USE_URING", "1");
    SKIP_WITHOUT_URING();
    std::thread([] {
      EventLoop other;
      EXPECT_EQ(other.engine(), EventLoop::Engine::kUring);
    }).join();
  }
}

// Where io_uring_setup is refused (a seccomp profile here), asking for the
// engine gives epoll and exactly one warning line, however many loops ask;
// the loops work.
TEST(UringPollerDeathTest, RefusedSetupFallsBackToEpollWithOneWarning) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (!forbidIoUringSetup()) ::_exit(3);
        muon::test::LogCapture logs;
        for (int i = 0; i < 3; ++i) {
          std::thread([] {
            EventLoop loop(uringOptions());
            if (loop.engine() != EventLoop::Engine::kEpoll) ::_exit(4);
            loop.runAfter(0.001, [&] { loop.quit(); });
            loop.loop();
          }).join();
        }
        const int warnings = muon::test::LogCapture::count("io_uring unavailable");
        const bool why = muon::test::LogCapture::contains("Operation not permitted");
        ::fprintf(stderr, "%s", muon::test::LogCapture::text().c_str());
        ::_exit(warnings == 1 && why ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "io_uring unavailable \\(io_uring_setup: Operation not permitted\\); using epoll");
}

// A channel removed while its poll is in flight is never called back, even
// when the poll has already fired and its fd number is taken at once by a
// new channel: the stale completion is dropped, and the new channel, which
// has nothing to read, is not called either.
TEST(UringPoller, RemovedChannelIsNotCalledWhenItsFdIsReused) {
  SKIP_WITHOUT_URING();
  EventLoop loop(uringOptions());
  int a[2];
  ASSERT_EQ(::pipe2(a, O_CLOEXEC | O_NONBLOCK), 0);
  int oldCalls = 0;
  auto old = std::make_unique<Channel>(&loop, a[0]);
  old->setReadCallback([&](muon::Timestamp) { ++oldCalls; });
  old->enableReading();
  int b[2] = {-1, -1};
  std::unique_ptr<Channel> fresh;
  int freshCalls = 0;
  loop.runAfter(0.001, [&] {
    // The poll on a[0] is armed: make it fire, then remove the channel
    // before the loop has seen the completion, and reuse the fd number.
    ASSERT_EQ(::write(a[1], "y", 1), 1);
    old->disableAll();
    old->remove();
    old.reset();
    ::close(a[0]);
    ASSERT_EQ(::pipe2(b, O_CLOEXEC | O_NONBLOCK), 0);
    ASSERT_EQ(b[0], a[0]);
    fresh = std::make_unique<Channel>(&loop, b[0]);
    fresh->setReadCallback([&](muon::Timestamp) { ++freshCalls; });
    fresh->enableReading();
  });
  loop.runAfter(0.1, [&] { loop.quit(); });
  loop.loop();
  EXPECT_EQ(oldCalls, 0);
  EXPECT_EQ(freshCalls, 0) << "a stale completion reached the fd's new channel";
  fresh->disableAll();
  fresh->remove();
  ::close(b[0]);
  ::close(b[1]);
  ::close(a[1]);
}
