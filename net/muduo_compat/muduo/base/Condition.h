// muduo/base/Condition.h for muduo programs built on muon: a condition
// variable bound to one MutexLock, which the caller holds around wait() and
// waitForSeconds() (muduo's rule). New code uses std::condition_variable.
#pragma once

#include <chrono>
#include <condition_variable>

#include "muduo/base/Mutex.h"

namespace muduo {

class Condition : noncopyable {
 public:
  explicit Condition(MutexLock& mutex) : mutex_(mutex) {}

  void wait() { cond_.wait(mutex_); }
  // True if it timed out.
  bool waitForSeconds(double seconds) {
    return cond_.wait_for(mutex_, std::chrono::duration<double>(seconds)) == std::cv_status::timeout;
  }
  void notify() { cond_.notify_one(); }
  void notifyAll() { cond_.notify_all(); }

 private:
  MutexLock& mutex_;
  std::condition_variable_any cond_;
};

}  // namespace muduo
