// muduo/base/Mutex.h for muduo programs built on muon: MutexLock is a
// std::mutex that remembers its holder's thread id (for assertLocked and
// isLockedByThisThread), MutexLockGuard its scoped lock. New code uses
// std::mutex and std::lock_guard.
#pragma once

#include <cassert>
#include <mutex>

#include "muduo/base/CurrentThread.h"
#include "muduo/base/noncopyable.h"

// muduo's clang thread-safety annotations, as no-ops (muon does not use
// them; see docs/reliability.md), so declarations that carry them compile.
#ifndef GUARDED_BY
#define GUARDED_BY(x)
#define PT_GUARDED_BY(x)
#define CAPABILITY(x)
#define SCOPED_CAPABILITY
#define ACQUIRED_BEFORE(...)
#define ACQUIRED_AFTER(...)
#define REQUIRES(...)
#define REQUIRES_SHARED(...)
#define ACQUIRE(...)
#define ACQUIRE_SHARED(...)
#define RELEASE(...)
#define RELEASE_SHARED(...)
#define TRY_ACQUIRE(...)
#define TRY_ACQUIRE_SHARED(...)
#define EXCLUDES(...)
#define ASSERT_CAPABILITY(x)
#define ASSERT_SHARED_CAPABILITY(x)
#define RETURN_CAPABILITY(x)
#define NO_THREAD_SAFETY_ANALYSIS
#endif

namespace muduo {

class MutexLock : noncopyable {
 public:
  MutexLock() = default;
  ~MutexLock() { assert(holder_ == 0); }

  bool isLockedByThisThread() const { return holder_ == CurrentThread::tid(); }
  void assertLocked() const { assert(isLockedByThisThread()); }

  // BasicLockable, so std::condition_variable_any (Condition) can wait on it.
  void lock() {
    mutex_.lock();
    holder_ = CurrentThread::tid();
  }
  void unlock() {
    holder_ = 0;
    mutex_.unlock();
  }

 private:
  std::mutex mutex_;
  int holder_ = 0;  // written only by the thread holding mutex_
};

class MutexLockGuard : noncopyable {
 public:
  explicit MutexLockGuard(MutexLock& mutex) : mutex_(mutex) { mutex_.lock(); }
  ~MutexLockGuard() { mutex_.unlock(); }

 private:
  MutexLock& mutex_;
};

}  // namespace muduo
