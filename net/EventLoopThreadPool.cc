#include "muon/net/EventLoopThreadPool.h"

#include <cassert>

#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThread.h"

namespace muon {
namespace net {

EventLoopThreadPool::EventLoopThreadPool(EventLoop* baseLoop, std::string name)
    : baseLoop_(baseLoop), name_(std::move(name)), started_(false), numThreads_(0), next_(0) {}

// The loops belong to their threads; destroying the threads quits and joins them.
EventLoopThreadPool::~EventLoopThreadPool() = default;

void EventLoopThreadPool::start(const ThreadInitCallback& cb) {
  // Any thread may start the pool (TcpServer::start is thread-safe), but
  // only once and before the base loop asks for a loop.
  assert(!started_);
  started_ = true;
  for (int i = 0; i < numThreads_; ++i) {
    // The I/O loops run on the engine and busy-poll setting of the base loop.
    threads_.push_back(
        std::make_unique<EventLoopThread>(cb, name_ + std::to_string(i), baseLoop_->options()));
    loops_.push_back(threads_.back()->startLoop());
  }
  if (numThreads_ == 0 && cb) {
    // The base loop is the only I/O loop, so cb runs in its thread like in
    // any other I/O loop's. start() may be called from another thread:
    // then cb is queued, ahead of anything queued after start() -- TcpServer enables
    // accepting only after it, so cb still runs before the first connection.
    baseLoop_->runInLoop([cb, loop = baseLoop_] { cb(loop); });
  }
}

EventLoop* EventLoopThreadPool::getNextLoop() {
  baseLoop_->assertInLoopThread();
  assert(started_);
  if (loops_.empty()) return baseLoop_;
  EventLoop* loop = loops_[next_];
  if (++next_ >= loops_.size()) next_ = 0;
  return loop;
}

EventLoop* EventLoopThreadPool::getLoopForHash(size_t hashCode) {
  baseLoop_->assertInLoopThread();
  return loops_.empty() ? baseLoop_ : loops_[hashCode % loops_.size()];
}

std::vector<EventLoop*> EventLoopThreadPool::getAllLoops() {
  baseLoop_->assertInLoopThread();
  assert(started_);
  return loops_.empty() ? std::vector<EventLoop*>{baseLoop_} : loops_;
}

}  // namespace net
}  // namespace muon
