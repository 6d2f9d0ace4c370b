#include "muon/net/internal/Poller.h"

#include <errno.h>
#include <sys/stat.h>

#include <atomic>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/internal/EPollPoller.h"
#include "muon/net/EventLoop.h"
#include "muon/net/internal/PollPoller.h"
#include "muon/net/internal/ReadinessTransport.h"
#ifdef MUON_HAVE_URING
#include "muon/net/internal/UringPoller.h"
#endif

namespace muon {
namespace net {

Poller::~Poller() = default;

bool Poller::hasChannel(Channel* channel) const {
  auto it = channels_.find(channel->fd());
  return it != channels_.end() && it->second == channel;
}

std::unique_ptr<Transport> Poller::newTransport(const Transport::Parts& parts) {
  return std::make_unique<ReadinessTransport>(parts);
}

void Poller::assertInLoopThread() const { ownerLoop_->assertInLoopThread(); }

// poll(2) and io_uring accept a regular file or a directory and report it
// always ready, so a loop waiting on one would spin; epoll refuses them with
// EPERM. The other engines refuse them the same way, so a program meets the
// same error whichever engine the environment picks. (Other files epoll
// refuses, such as /dev/null, cannot be told from a stat; docs/net.md.)
int Poller::refuseUnwaitable(int fd) {
  struct stat st;
  int err = 0;
  if (::fstat(fd, &st) != 0) {
    err = errno;
  } else if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    err = EPERM;
  }
  if (err != 0) {
    LOG_ERROR << "Poller: fd=" << fd << " refused: " << strerror_tl(err) << " (errno=" << err
              << "); a Channel needs a socket, pipe, eventfd, timerfd or terminal";
  }
  return err;
}

std::unique_ptr<Poller> Poller::newPoller(EventLoop* loop, EventLoop::Engine* engine) {
  switch (*engine) {
    case EventLoop::Engine::kPoll:
      return std::make_unique<PollPoller>(loop);
    case EventLoop::Engine::kUring: {
      std::string reason;
#ifdef MUON_HAVE_URING
      if (std::unique_ptr<Poller> uring = UringPoller::create(loop, &reason)) return uring;
#else
      reason = "muon was built without liburing";
#endif
      // One line per process, not per loop: a server's I/O threads would
      // each say the same.
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) {
        LOG_WARN << "io_uring unavailable (" << reason << "); using epoll";
      }
      *engine = EventLoop::Engine::kEpoll;
      return std::make_unique<EPollPoller>(loop);
    }
    case EventLoop::Engine::kEpoll:
    case EventLoop::Engine::kFromEnvironment:
      break;
  }
  *engine = EventLoop::Engine::kEpoll;
  return std::make_unique<EPollPoller>(loop);
}

}  // namespace net
}  // namespace muon
