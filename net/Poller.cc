#include "muon/net/Poller.h"

#include <atomic>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/EPollPoller.h"
#include "muon/net/EventLoop.h"
#include "muon/net/PollPoller.h"
#ifdef MUON_HAVE_URING
#include "muon/net/UringPoller.h"
#endif

namespace muon {
namespace net {

Poller::~Poller() = default;

bool Poller::hasChannel(Channel* channel) const {
  auto it = channels_.find(channel->fd());
  return it != channels_.end() && it->second == channel;
}

void Poller::assertInLoopThread() const { ownerLoop_->assertInLoopThread(); }

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
