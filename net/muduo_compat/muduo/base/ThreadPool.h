// muduo/base/ThreadPool.h for muduo programs built on muon: start(n) runs n
// threads taking tasks from one queue; with setMaxQueueSize(m > 0), run()
// waits while m tasks are queued; with 0 threads, run() runs the task at
// once in the caller. stop() wakes the threads, lets each finish the task
// it is running, and joins them (tasks still queued are dropped, as in
// muduo). run() is safe from any thread; the rest from the owner's.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "muduo/base/Condition.h"
#include "muduo/base/Thread.h"

namespace muduo {

class ThreadPool : noncopyable {
 public:
  using Task = std::function<void()>;

  explicit ThreadPool(const string& nameArg = string("ThreadPool"))
      : notEmpty_(mutex_), notFull_(mutex_), name_(nameArg) {}
  ~ThreadPool() {
    if (running_) stop();
  }

  // Before start().
  void setMaxQueueSize(int maxSize) { maxQueueSize_ = static_cast<size_t>(maxSize); }
  void setThreadInitCallback(const Task& cb) { threadInitCallback_ = cb; }

  void start(int numThreads) {
    running_ = true;
    for (int i = 0; i < numThreads; ++i) {
      threads_.push_back(std::make_unique<Thread>([this] { runInThread(); }, name_ + std::to_string(i + 1)));
      threads_.back()->start();
    }
    if (numThreads == 0 && threadInitCallback_) threadInitCallback_();
  }
  void stop() {
    {
      MutexLockGuard lock(mutex_);
      running_ = false;
      notEmpty_.notifyAll();
      notFull_.notifyAll();
    }
    for (auto& t : threads_) t->join();
  }

  const string& name() const { return name_; }
  size_t queueSize() const {
    MutexLockGuard lock(mutex_);
    return queue_.size();
  }

  void run(Task task) {
    if (threads_.empty()) {
      task();
      return;
    }
    MutexLockGuard lock(mutex_);
    while (maxQueueSize_ > 0 && queue_.size() >= maxQueueSize_ && running_) notFull_.wait();
    if (!running_) return;
    queue_.push_back(std::move(task));
    notEmpty_.notify();
  }

 private:
  void runInThread() {
    if (threadInitCallback_) threadInitCallback_();
    while (Task task = take()) task();
  }
  // An empty Task once stopped.
  Task take() {
    MutexLockGuard lock(mutex_);
    while (queue_.empty() && running_) notEmpty_.wait();
    if (!running_) return Task();
    Task task = std::move(queue_.front());
    queue_.pop_front();
    if (maxQueueSize_ > 0) notFull_.notify();
    return task;
  }

  mutable MutexLock mutex_;
  Condition notEmpty_;
  Condition notFull_;
  const string name_;
  Task threadInitCallback_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::deque<Task> queue_;   // guarded by mutex_
  size_t maxQueueSize_ = 0;  // 0: unbounded
  bool running_ = false;     // guarded by mutex_ once threads run
};

}  // namespace muduo
