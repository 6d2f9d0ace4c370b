// Poller: the I/O multiplexing interface behind EventLoop. Internal header.
//
// EPollPoller is the default; setting the environment variable MUON_USE_POLL
// (to anything) selects PollPoller, for comparison and debugging. A Poller
// belongs to one EventLoop; every member is for its thread.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "muon/base/Timestamp.h"

namespace muon {
namespace net {

class Channel;
class EventLoop;

class Poller {
 public:
  using ChannelList = std::vector<Channel*>;

  explicit Poller(EventLoop* loop) : ownerLoop_(loop) {}
  virtual ~Poller();
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  // Waits up to timeoutMs for I/O; appends the ready channels (with their
  // revents set) to *activeChannels. Returns when poll returned.
  virtual Timestamp poll(int timeoutMs, ChannelList* activeChannels) = 0;
  // Adds the channel, or changes its interest set.
  virtual void updateChannel(Channel* channel) = 0;
  // Forgets the channel (it must have no interest left).
  virtual void removeChannel(Channel* channel) = 0;
  virtual bool hasChannel(Channel* channel) const;

  static std::unique_ptr<Poller> newDefaultPoller(EventLoop* loop);

  void assertInLoopThread() const;

 protected:
  std::unordered_map<int, Channel*> channels_;  // fd -> channel

 private:
  EventLoop* const ownerLoop_;
};

}  // namespace net
}  // namespace muon
