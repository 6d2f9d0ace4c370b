// Channel: tie() keeps the owner alive through its own event, and a dead
// owner gets no callbacks.
#include "muon/net/Channel.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>

#include <gtest/gtest.h>

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
