// The pollers: MUON_USE_POLL selects poll(2) instead of epoll, and it works.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "EngineSupport.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"

using muon::net::Channel;
using muon::net::EventLoop;
using muon::net::test::ScopedEnv;

namespace {

// How many epoll instances this process has open.
int countEpollFds() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd) {
    char target[64] = "";
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    ssize_t len = ::readlink(link.c_str(), target, sizeof target - 1);
    if (len > 0 && std::string(target, static_cast<size_t>(len)) == "anon_inode:[eventpoll]") ++n;
  }
  return n;
}
}  // namespace

TEST(Poller, PollPollerChosenByEnvironmentWorks) {
  ::setenv("MUON_USE_POLL", "1", 1);
  {
    EventLoop loop;
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    Channel channel(&loop, fds[0]);
    int reads = 0;
    channel.setReadCallback([&](muon::Timestamp) {
      char c;
      ASSERT_EQ(::read(fds[0], &c, 1), 1);
      if (++reads == 3) loop.quit();
    });
    channel.enableReading();
    loop.runEvery(0.001, [&] { ASSERT_EQ(::write(fds[1], "x", 1), 1); });
    loop.loop();
    EXPECT_EQ(reads, 3);
    channel.disableAll();
    channel.remove();
    ::close(fds[0]);
    ::close(fds[1]);
  }
  ::unsetenv("MUON_USE_POLL");
}

// MUON_USE_POLL really swaps the poller: a loop made with it set opens no
// epoll instance, one made without it opens one.
TEST(Poller, MuonUsePollSelectsThePollPoller) {
  const char* saved = std::getenv("MUON_USE_POLL");
  const std::string savedValue = saved != nullptr ? saved : "";
  ::unsetenv("MUON_USE_POLL");
  // The uring.* run of this test sets MUON_USE_URING; the first loop here
  // must be the default one.
  ScopedEnv noUring("MUON_USE_URING", nullptr);
  const int before = countEpollFds();
  {
    EventLoop loop;
    EXPECT_EQ(countEpollFds(), before + 1);
  }
  ::setenv("MUON_USE_POLL", "1", 1);
  {
    EventLoop loop;
    EXPECT_EQ(countEpollFds(), before);
  }
  if (saved != nullptr) {
    ::setenv("MUON_USE_POLL", savedValue.c_str(), 1);
  } else {
    ::unsetenv("MUON_USE_POLL");
  }
}
