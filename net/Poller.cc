#include "muon/net/Poller.h"

#include <cstdlib>

#include "muon/net/Channel.h"
#include "muon/net/EPollPoller.h"
#include "muon/net/EventLoop.h"
#include "muon/net/PollPoller.h"

namespace muon {
namespace net {

Poller::~Poller() = default;

bool Poller::hasChannel(Channel* channel) const {
  auto it = channels_.find(channel->fd());
  return it != channels_.end() && it->second == channel;
}

void Poller::assertInLoopThread() const { ownerLoop_->assertInLoopThread(); }

std::unique_ptr<Poller> Poller::newDefaultPoller(EventLoop* loop) {
  if (std::getenv("MUON_USE_POLL") != nullptr) return std::make_unique<PollPoller>(loop);
  return std::make_unique<EPollPoller>(loop);
}

}  // namespace net
}  // namespace muon
