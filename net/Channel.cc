#include "muon/net/Channel.h"

#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>

#include <cassert>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"

namespace muon {
namespace net {

// Channel speaks poll(2) bits; epoll uses the same values on Linux.
static_assert(EPOLLIN == POLLIN && EPOLLPRI == POLLPRI && EPOLLOUT == POLLOUT &&
                  EPOLLRDHUP == POLLRDHUP && EPOLLERR == POLLERR && EPOLLHUP == POLLHUP,
              "epoll and poll event bits differ");

const int Channel::kNoneEvent = 0;
const int Channel::kReadEvent = POLLIN | POLLPRI;
const int Channel::kWriteEvent = POLLOUT;

Channel::Channel(EventLoop* loop, int fd)
    : loop_(loop),
      fd_(fd),
      events_(0),
      revents_(0),
      index_(-1),
      logHup_(true),
      tied_(false),
      eventHandling_(false),
      addedToLoop_(false) {}

Channel::~Channel() {
  assert(!eventHandling_);
  assert(!addedToLoop_);
  if (loop_->isInLoopThread()) assert(!loop_->hasChannel(this));
}

void Channel::tie(const std::shared_ptr<void>& owner) {
  tie_ = owner;
  tied_ = true;
}

bool Channel::update(int events) {
  const int oldEvents = events_;
  events_ = events;
  const int err = loop_->updateChannel(this);
  if (err != 0) {
    events_ = oldEvents;
    errno = err;
    return false;
  }
  addedToLoop_ = true;
  return true;
}

void Channel::remove() {
  assert(isNoneEvent());
  // A channel that never had interest never reached the poller.
  if (!addedToLoop_) return;
  addedToLoop_ = false;
  loop_->removeChannel(this);
}

void Channel::handleEvent(Timestamp receiveTime) {
  if (tied_) {
    std::shared_ptr<void> guard = tie_.lock();
    // The owner is already gone: nothing left to call.
    if (guard) handleEventWithGuard(receiveTime);
  } else {
    handleEventWithGuard(receiveTime);
  }
}

void Channel::handleEventWithGuard(Timestamp receiveTime) {
  eventHandling_ = true;
  LOG_TRACE << reventsToString();
  // Hang-up with nothing left to read: the close callback. With POLLIN the
  // read callback sees the EOF (or error) itself and closes there.
  if ((revents_ & POLLHUP) && !(revents_ & POLLIN)) {
    if (logHup_) LOG_WARN << "fd = " << fd_ << " Channel::handleEvent() POLLHUP";
    if (closeCallback_) closeCallback_();
  }
  if (revents_ & POLLNVAL) LOG_WARN << "fd = " << fd_ << " Channel::handleEvent() POLLNVAL";
  if (revents_ & (POLLERR | POLLNVAL)) {
    if (errorCallback_) errorCallback_();
  }
  if (revents_ & (POLLIN | POLLPRI | POLLRDHUP)) {
    if (readCallback_) readCallback_(receiveTime);
  }
  if (revents_ & POLLOUT) {
    if (writeCallback_) writeCallback_();
  }
  eventHandling_ = false;
}

std::string Channel::reventsToString() const { return eventsToString(fd_, revents_); }
std::string Channel::eventsToString() const { return eventsToString(fd_, events_); }

std::string Channel::eventsToString(int fd, int ev) {
  std::string s = std::to_string(fd) + ": ";
  if (ev & POLLIN) s += "IN ";
  if (ev & POLLPRI) s += "PRI ";
  if (ev & POLLOUT) s += "OUT ";
  if (ev & POLLHUP) s += "HUP ";
  if (ev & POLLRDHUP) s += "RDHUP ";
  if (ev & POLLERR) s += "ERR ";
  if (ev & POLLNVAL) s += "NVAL ";
  return s;
}

}  // namespace net
}  // namespace muon
