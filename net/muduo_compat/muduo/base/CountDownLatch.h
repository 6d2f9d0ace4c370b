// muduo/base/CountDownLatch.h for muduo programs built on muon: wait()
// blocks until countDown() has been called `count` times. Thread-safe.
#pragma once

#include "muduo/base/Condition.h"

namespace muduo {

class CountDownLatch : noncopyable {
 public:
  explicit CountDownLatch(int count) : condition_(mutex_), count_(count) {}

  void wait() {
    MutexLockGuard lock(mutex_);
    while (count_ > 0) condition_.wait();
  }
  void countDown() {
    MutexLockGuard lock(mutex_);
    if (--count_ == 0) condition_.notifyAll();
  }
  int getCount() const {
    MutexLockGuard lock(mutex_);
    return count_;
  }

 private:
  mutable MutexLock mutex_;
  Condition condition_;
  int count_;  // guarded by mutex_
};

}  // namespace muduo
