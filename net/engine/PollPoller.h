// PollPoller: Poller over poll(2). Internal header; chosen by MUON_USE_POLL.
#pragma once

#include <poll.h>

#include <vector>

#include "muon/net/internal/Poller.h"

namespace muon {
namespace net {

class PollPoller : public Poller {
 public:
  explicit PollPoller(EventLoop* loop);
  ~PollPoller() override;

  Timestamp poll(int timeoutMs, ChannelList* activeChannels) override;
  int updateChannel(Channel* channel) override;
  void removeChannel(Channel* channel) override;

 private:
  std::vector<struct pollfd> pollfds_;  // a channel's index() is its slot here
};

}  // namespace net
}  // namespace muon
