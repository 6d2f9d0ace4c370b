// muduo/base/BlockingQueue.h for muduo programs built on muon: an unbounded
// queue whose take() waits for an element. Thread-safe.
#pragma once

#include <deque>
#include <utility>

#include "muduo/base/Condition.h"

namespace muduo {

template <typename T>
class BlockingQueue : noncopyable {
 public:
  BlockingQueue() : notEmpty_(mutex_) {}

  void put(const T& x) {
    MutexLockGuard lock(mutex_);
    queue_.push_back(x);
    notEmpty_.notify();
  }
  void put(T&& x) {
    MutexLockGuard lock(mutex_);
    queue_.push_back(std::move(x));
    notEmpty_.notify();
  }
  T take() {
    MutexLockGuard lock(mutex_);
    while (queue_.empty()) notEmpty_.wait();
    T front(std::move(queue_.front()));
    queue_.pop_front();
    return front;
  }
  size_t size() const {
    MutexLockGuard lock(mutex_);
    return queue_.size();
  }

 private:
  mutable MutexLock mutex_;
  Condition notEmpty_;
  std::deque<T> queue_;  // guarded by mutex_
};

}  // namespace muduo
