#include "muon/net/internal/PollPoller.h"

#include <errno.h>

#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"

namespace muon {
namespace net {

PollPoller::PollPoller(EventLoop* loop) : Poller(loop) {}

PollPoller::~PollPoller() = default;

Timestamp PollPoller::poll(int timeoutMs, ChannelList* activeChannels) {
  int numEvents = ::poll(pollfds_.data(), pollfds_.size(), timeoutMs);
  int savedErrno = errno;
  Timestamp now(Timestamp::now());
  if (numEvents > 0) {
    for (const struct pollfd& pfd : pollfds_) {
      if (pfd.revents == 0) continue;
      auto it = channels_.find(pfd.fd < 0 ? -pfd.fd - 1 : pfd.fd);
      assert(it != channels_.end());
      it->second->setRevents(pfd.revents);
      activeChannels->push_back(it->second);
      if (--numEvents == 0) break;
    }
  } else if (numEvents < 0 && savedErrno != EINTR) {
    errno = savedErrno;
    LOG_SYSERR << "PollPoller::poll()";
  }
  return now;
}

int PollPoller::updateChannel(Channel* channel) {
  assertInLoopThread();
  // A channel with no interest keeps its slot with a negative fd, which
  // poll(2) skips; -fd-1 so that fd 0 works too.
  short events = static_cast<short>(channel->events());
  int pollFd = channel->isNoneEvent() ? -channel->fd() - 1 : channel->fd();
  if (channel->index() < 0) {
    assert(channels_.find(channel->fd()) == channels_.end());
    if (int err = refuseUnwaitable(channel->fd())) return err;
    pollfds_.push_back(pollfd{pollFd, events, 0});
    channel->setIndex(static_cast<int>(pollfds_.size()) - 1);
    channels_[channel->fd()] = channel;
  } else {
    assert(hasChannel(channel));
    struct pollfd& pfd = pollfds_[static_cast<size_t>(channel->index())];
    pfd.fd = pollFd;
    pfd.events = events;
    pfd.revents = 0;
  }
  return 0;
}

void PollPoller::removeChannel(Channel* channel) {
  assertInLoopThread();
  assert(hasChannel(channel));
  assert(channel->isNoneEvent());
  size_t idx = static_cast<size_t>(channel->index());
  assert(idx < pollfds_.size());
  channels_.erase(channel->fd());
  // Fill the hole with the last slot.
  if (idx != pollfds_.size() - 1) {
    pollfds_[idx] = pollfds_.back();
    int movedFd = pollfds_[idx].fd < 0 ? -pollfds_[idx].fd - 1 : pollfds_[idx].fd;
    channels_[movedFd]->setIndex(static_cast<int>(idx));
  }
  pollfds_.pop_back();
  channel->setIndex(-1);
}

}  // namespace net
}  // namespace muon
