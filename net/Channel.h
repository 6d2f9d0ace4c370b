// Channel: the events of interest on one fd, and what to call when they
// happen. Internal header: TcpConnection, Acceptor, Connector, TimerQueue and
// EventLoop use it; applications do not.
//
// A Channel does not own its fd. It belongs to one EventLoop and every
// member is for that loop's thread. Interest changes reach the poller only
// when the interest set actually changes (no epoll_ctl churn).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "muon/base/Timestamp.h"

namespace muon {
namespace net {

class EventLoop;

class Channel {
 public:
  using EventCallback = std::function<void()>;
  using ReadEventCallback = std::function<void(Timestamp)>;

  Channel(EventLoop* loop, int fd);
  // The channel must have been remove()d (or never added).
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Called by EventLoop::loop for the events the poller reported.
  void handleEvent(Timestamp receiveTime);

  void setReadCallback(ReadEventCallback cb) { readCallback_ = std::move(cb); }
  void setWriteCallback(EventCallback cb) { writeCallback_ = std::move(cb); }
  void setCloseCallback(EventCallback cb) { closeCallback_ = std::move(cb); }
  void setErrorCallback(EventCallback cb) { errorCallback_ = std::move(cb); }

  // Ties the channel to its owner: while handleEvent runs it holds a
  // shared_ptr to the owner, so a callback that drops the last outside
  // reference (say, a TcpConnection removed from its server) cannot destroy
  // the owner -- and this channel -- under its own feet.
  void tie(const std::shared_ptr<void>& owner);

  int fd() const { return fd_; }
  int events() const { return events_; }
  void setRevents(int revents) { revents_ = revents; }
  bool isNoneEvent() const { return events_ == kNoneEvent; }

  // Change the interest set. false, with errno set, when the poller refused
  // the fd (logged): a regular file or a directory on every engine, or a
  // closed fd; the interest set is then left as it was, the loop goes on.
  bool enableReading() { return setEvents(events_ | kReadEvent); }
  bool disableReading() { return setEvents(events_ & ~kReadEvent); }
  bool enableWriting() { return setEvents(events_ | kWriteEvent); }
  bool disableWriting() { return setEvents(events_ & ~kWriteEvent); }
  bool disableAll() { return setEvents(kNoneEvent); }
  bool isWriting() const { return events_ & kWriteEvent; }
  bool isReading() const { return events_ & kReadEvent; }

  // For the Poller: its bookkeeping slot (epoll state or pollfd index).
  int index() const { return index_; }
  void setIndex(int index) { index_ = index; }

  std::string reventsToString() const;
  std::string eventsToString() const;
  // Don't log POLLHUP (e.g. for a connector's socket).
  void doNotLogHup() { logHup_ = false; }

  EventLoop* ownerLoop() const { return loop_; }
  // Leaves the poller. Required before destruction.
  void remove();

 private:
  static std::string eventsToString(int fd, int ev);
  bool setEvents(int events) { return events == events_ || update(events); }
  bool update(int events);
  void handleEventWithGuard(Timestamp receiveTime);

  static const int kNoneEvent;
  static const int kReadEvent;
  static const int kWriteEvent;

  EventLoop* const loop_;
  const int fd_;
  int events_;
  int revents_;  // what the poller reported
  int index_;
  bool logHup_;
  std::weak_ptr<void> tie_;
  bool tied_;
  bool eventHandling_;
  bool addedToLoop_;
  ReadEventCallback readCallback_;
  EventCallback writeCallback_;
  EventCallback closeCallback_;
  EventCallback errorCallback_;
};

}  // namespace net
}  // namespace muon
