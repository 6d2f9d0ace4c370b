#include "muon/net/internal/EPollPoller.h"

#include <errno.h>
#include <unistd.h>

#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"

namespace muon {
namespace net {

namespace {
// Channel::index() as seen by EPollPoller.
constexpr int kNew = -1;     // never added
constexpr int kAdded = 1;    // in the epoll set
constexpr int kDeleted = 2;  // known, but out of the epoll set (no interest)
}  // namespace

EPollPoller::EPollPoller(EventLoop* loop)
    : Poller(loop), epollfd_(::epoll_create1(EPOLL_CLOEXEC)), events_(kInitEventListSize) {
  if (epollfd_ < 0) LOG_SYSFATAL << "EPollPoller: epoll_create1";
}

EPollPoller::~EPollPoller() { ::close(epollfd_); }

Timestamp EPollPoller::poll(int timeoutMs, ChannelList* activeChannels) {
  int numEvents = ::epoll_wait(epollfd_, events_.data(), static_cast<int>(events_.size()), timeoutMs);
  int savedErrno = errno;
  Timestamp now(Timestamp::now());
  if (numEvents > 0) {
    for (int i = 0; i < numEvents; ++i) {
      Channel* channel = static_cast<Channel*>(events_[static_cast<size_t>(i)].data.ptr);
      channel->setRevents(static_cast<int>(events_[static_cast<size_t>(i)].events));
      activeChannels->push_back(channel);
    }
    // A full array may mean more were ready: grow so one poll sees them all.
    if (static_cast<size_t>(numEvents) == events_.size()) events_.resize(events_.size() * 2);
  } else if (numEvents < 0 && savedErrno != EINTR) {
    errno = savedErrno;
    LOG_SYSERR << "EPollPoller::poll()";
  }
  return now;
}

int EPollPoller::updateChannel(Channel* channel) {
  assertInLoopThread();
  const int index = channel->index();
  const int fd = channel->fd();
  if (index == kNew || index == kDeleted) {
    if (index == kNew) {
      assert(channels_.find(fd) == channels_.end());
      channels_[fd] = channel;
    } else {
      assert(hasChannel(channel));
    }
    // A channel with no interest stays out of the set until it has some.
    if (channel->isNoneEvent()) {
      channel->setIndex(kDeleted);
      return 0;
    }
    const int err = update(EPOLL_CTL_ADD, channel);
    if (err == 0) {
      channel->setIndex(kAdded);
    } else if (index == kNew) {
      channels_.erase(fd);  // refused: as if never seen
    }
    return err;
  }
  assert(hasChannel(channel));
  assert(index == kAdded);
  if (channel->isNoneEvent()) {
    update(EPOLL_CTL_DEL, channel);
    channel->setIndex(kDeleted);
    return 0;
  }
  return update(EPOLL_CTL_MOD, channel);
}

void EPollPoller::removeChannel(Channel* channel) {
  assertInLoopThread();
  assert(hasChannel(channel));
  assert(channel->isNoneEvent());
  const int index = channel->index();
  assert(index == kAdded || index == kDeleted);
  channels_.erase(channel->fd());
  if (index == kAdded) update(EPOLL_CTL_DEL, channel);
  channel->setIndex(kNew);
}

// Returns 0 or the errno (logged). ADD is refused with EPERM for files epoll
// cannot wait on (regular files, directories, /dev/null), EBADF for a closed
// fd; a failed DEL means the kernel dropped the fd already (it was closed).
int EPollPoller::update(int operation, Channel* channel) {
  struct epoll_event event {};
  event.events = static_cast<uint32_t>(channel->events());
  event.data.ptr = channel;
  if (::epoll_ctl(epollfd_, operation, channel->fd(), &event) == 0) return 0;
  const int savedErrno = errno;
  const char* op = operation == EPOLL_CTL_ADD ? "ADD" : operation == EPOLL_CTL_DEL ? "DEL" : "MOD";
  LOG_SYSERR << "epoll_ctl op=" << op << " fd=" << channel->fd();
  return savedErrno;
}

}  // namespace net
}  // namespace muon
