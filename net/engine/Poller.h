// Poller: the I/O multiplexing interface behind EventLoop. Internal header.
//
// EPollPoller is the default; PollPoller (poll(2)) is for comparison and
// debugging; UringPoller waits on io_uring and drives connections by
// completions (see UringPoller.h). EventLoop::Options picks one. A Poller
// belongs to one EventLoop; every member but newTransport() is for its
// thread.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "muon/base/Timestamp.h"
#include "muon/net/EventLoop.h"
#include "muon/net/internal/Transport.h"

namespace muon {
namespace net {

class Channel;

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
  // The transport that drives a connected socket on this engine: a
  // ReadinessTransport here, a UringTransport on io_uring. Any thread (a
  // TcpServer makes connections for its I/O loops in its own): it only
  // builds the object, which acts in the loop thread from attach() on.
  virtual std::unique_ptr<Transport> newTransport(const Transport::Parts& parts);

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
