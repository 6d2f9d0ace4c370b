// EPollPoller: Poller over epoll(7), level-triggered. Internal header.
#pragma once

#include <sys/epoll.h>

#include <vector>

#include "muon/net/internal/Poller.h"

namespace muon {
namespace net {

class EPollPoller : public Poller {
 public:
  explicit EPollPoller(EventLoop* loop);
  ~EPollPoller() override;

  Timestamp poll(int timeoutMs, ChannelList* activeChannels) override;
  int updateChannel(Channel* channel) override;
  void removeChannel(Channel* channel) override;

 private:
  static constexpr int kInitEventListSize = 16;
  int update(int operation, Channel* channel);

  int epollfd_;
  std::vector<struct epoll_event> events_;
};

}  // namespace net
}  // namespace muon
