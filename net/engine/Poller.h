// Poller: the I/O multiplexing interface behind EventLoop. Internal header.
//
// EPollPoller is the default; PollPoller (poll(2)) is for comparison and
// debugging; UringPoller waits on io_uring and also offers completion-based
// socket I/O (see UringPoller.h). EventLoop::Options picks one. A Poller
// belongs to one EventLoop; every member is for its thread.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "muon/base/Timestamp.h"
#include "muon/net/EventLoop.h"

namespace muon {
namespace net {

class Channel;
class UringPoller;

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
  // Adds the channel, or changes its interest set. Returns 0, or the errno
  // with which the fd was refused (logged); the poller then holds the
  // channel as it did before the call (a refused new channel stays out).
  virtual int updateChannel(Channel* channel) = 0;
  // Forgets the channel (it must have no interest left).
  virtual void removeChannel(Channel* channel) = 0;
  virtual bool hasChannel(Channel* channel) const;

  // The poller for *engine (never kFromEnvironment). When io_uring cannot
  // be had, returns an EPollPoller, sets *engine to kEpoll and logs one
  // warning line per process.
  static std::unique_ptr<Poller> newPoller(EventLoop* loop, EventLoop::Engine* engine);

  // Completion-based engines run the callbacks of what the last poll()
  // completed and return how many; EventLoop calls it after the active
  // channels.
  virtual size_t dispatchCompletions() { return 0; }
  // The io_uring poller, or nullptr for the readiness-only engines.
  virtual UringPoller* asUring() { return nullptr; }

  void assertInLoopThread() const;

 protected:
  // For the engines that take any fd (poll, io_uring): 0, or the errno
  // epoll would refuse `fd` with (logged). See the definition.
  static int refuseUnwaitable(int fd);

  std::unordered_map<int, Channel*> channels_;  // fd -> channel

 private:
  EventLoop* const ownerLoop_;
};

}  // namespace net
}  // namespace muon
