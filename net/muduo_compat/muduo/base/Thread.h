// muduo/base/Thread.h for muduo programs built on muon: a std::thread that
// starts on start(), knows its kernel thread id once start() returns, and
// names itself for CurrentThread::name(). join() or the destructor (which
// detaches a thread not joined) from the thread that owns the object, as
// in muduo. New code uses std::thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "muduo/base/Atomic.h"
#include "muduo/base/CountDownLatch.h"
#include "muduo/base/CurrentThread.h"
#include "muduo/base/Types.h"

namespace muduo {

class Thread : noncopyable {
 public:
  using ThreadFunc = std::function<void()>;

  explicit Thread(ThreadFunc func, const string& name = string())
      : func_(std::move(func)), name_(name), running_(1) {
    const int num = ++numCreated_;
    if (name_.empty()) name_ = "Thread" + std::to_string(num);
  }
  ~Thread() {
    if (thread_.joinable()) thread_.detach();
  }

  void start() {
    thread_ = std::thread([this] {
      tid_ = CurrentThread::tid();
      CurrentThread::detail::t_threadName = name_.c_str();
      running_.countDown();
      func_();
      CurrentThread::detail::t_threadName = "finished";
    });
    running_.wait();  // tid_ is set
  }
  // Returns 0, as pthread_join does on success.
  int join() {
    thread_.join();
    return 0;
  }

  bool started() const { return thread_.joinable() || tid_ != 0; }
  pid_t tid() const { return tid_; }
  const string& name() const { return name_; }
  static int numCreated() { return numCreated_.load(); }

 private:
  ThreadFunc func_;
  string name_;
  std::thread thread_;
  CountDownLatch running_;  // counted down once the new thread has set tid_
  pid_t tid_ = 0;
  static inline std::atomic<int> numCreated_{0};
};

}  // namespace muduo
