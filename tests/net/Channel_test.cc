// Channel: tie() keeps the owner alive through its own event, a dead owner
// gets no callbacks, and an fd the poller refuses is an error, not an abort
// (label `fault`).
#include "muon/net/Channel.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "LogCapture.h"
#include "TempDir.h"
#include "muon/net/EventLoop.h"

using muon::net::Channel;
using muon::net::EventLoop;

// Channel::tie: a callback that drops the owner's last outside reference
// must not destroy the owner (and its channel, and the running callback)
// before handleEvent returns.
TEST(Channel, TieKeepsTheOwnerAliveDuringItsOwnEvent) {
  struct Owner {
    Owner(EventLoop* loop, int fd, bool* flag) : channel(loop, fd), destroyed(flag) {}
    ~Owner() {
      channel.disableAll();
      channel.remove();
      *destroyed = true;
    }
    Channel channel;
    bool* destroyed;
  };
  EventLoop loop;
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  bool destroyed = false;
  bool destroyedInCallback = true;
  auto owner = std::make_shared<Owner>(&loop, fds[0], &destroyed);
  owner->channel.tie(owner);
  owner->channel.setReadCallback([&](muon::Timestamp) {
    owner.reset();  // the last reference outside the channel
    destroyedInCallback = destroyed;
    loop.quit();
  });
  owner->channel.enableReading();
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  loop.loop();
  EXPECT_FALSE(destroyedInCallback) << "the owner died inside its own event";
  EXPECT_TRUE(destroyed) << "the tie kept the owner alive after the event";
  ::close(fds[0]);
  ::close(fds[1]);
}

// An owner that is already gone gets no callbacks.
TEST(Channel, TiedToADeadOwnerCallsNothing) {
  EventLoop loop;
  int tied[2], other[2];
  ASSERT_EQ(::pipe2(tied, O_CLOEXEC | O_NONBLOCK), 0);
  ASSERT_EQ(::pipe2(other, O_CLOEXEC | O_NONBLOCK), 0);
  Channel channel(&loop, tied[0]);
  int calls = 0;
  {
    auto owner = std::make_shared<int>(0);
    channel.tie(owner);
  }
  channel.setReadCallback([&](muon::Timestamp) { ++calls; });
  channel.enableReading();
  // Both readable before the poll, so both events come in one iteration.
  Channel quitter(&loop, other[0]);
  quitter.setReadCallback([&](muon::Timestamp) { loop.quit(); });
  quitter.enableReading();
  ASSERT_EQ(::write(tied[1], "x", 1), 1);
  ASSERT_EQ(::write(other[1], "x", 1), 1);
  loop.loop();
  EXPECT_EQ(loop.iteration(), 1);
  EXPECT_EQ(calls, 0);
  for (Channel* c : {&channel, &quitter}) {
    c->disableAll();
    c->remove();
  }
  for (int fd : {tied[0], tied[1], other[0], other[1]}) ::close(fd);
}

// epoll refuses a regular file or a directory (EPERM); that aborted the
// process. poll(2) and io_uring took them and reported them always ready,
// so the loop spun on them. Every engine now refuses them: enableReading()
// is false with errno EPERM, logged with the fd, and the loop goes on
// serving its other channels and timers.
TEST(ChannelFault, ARegularFileOrADirectoryIsRefusedAndTheLoopGoesOn) {
  muon::test::LogCapture logs;
  muon::test::TempDir dir;
  const int fileFd = ::open(dir.file("plain").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fileFd, 0);
  const int dirFd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dirFd, 0);
  EventLoop loop;
  int refusedCalls = 0;
  Channel file(&loop, fileFd);
  Channel directory(&loop, dirFd);
  for (Channel* c : {&file, &directory}) {
    c->setReadCallback([&](muon::Timestamp) { ++refusedCalls; });
    c->setWriteCallback([&] { ++refusedCalls; });
    errno = 0;
    EXPECT_FALSE(c->enableReading());
    EXPECT_EQ(errno, EPERM);
    EXPECT_FALSE(c->enableWriting());
    EXPECT_EQ(errno, EPERM);
    EXPECT_TRUE(c->isNoneEvent()) << "the interest set is left as it was";
    EXPECT_TRUE(muon::test::LogCapture::contains("fd=" + std::to_string(c->fd())));
  }
  EXPECT_TRUE(muon::test::LogCapture::contains("Operation not permitted"));

  // A pipe and a timer in the same loop still work.
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  Channel pipe(&loop, fds[0]);
  bool pipeRead = false, timerFired = false;
  pipe.setReadCallback([&](muon::Timestamp) {
    char ch;
    ASSERT_EQ(::read(fds[0], &ch, 1), 1);
    pipeRead = true;
    if (timerFired) loop.quit();
  });
  ASSERT_TRUE(pipe.enableReading());
  loop.runAfter(0.001, [&] {
    timerFired = true;
    ASSERT_EQ(::write(fds[1], "x", 1), 1);
  });
  loop.runAfter(20.0, [&] { loop.quit(); });  // a failure, not a hang
  loop.loop();
  EXPECT_TRUE(timerFired);
  EXPECT_TRUE(pipeRead);
  EXPECT_EQ(refusedCalls, 0);
  for (Channel* c : {&file, &directory, &pipe}) {
    c->disableAll();
    c->remove();
  }
  for (int fd : {fileFd, dirFd, fds[0], fds[1]}) ::close(fd);
}
