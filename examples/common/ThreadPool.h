// ThreadPool: a fixed number of threads running tasks from one queue, for
// work that must not run in an I/O loop (the book's §3.3.2 and §6.6.1: the
// loop reads a request, the pool computes, the reply is sent with the
// thread-safe TcpConnection::send).
//
// run() is safe from any thread; a task run() after stop() is dropped.
// stop() (also done by the destructor) lets the threads finish the tasks
// already queued, then joins them; call it from the thread that made the
// pool, never from one of its tasks.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace muon {
namespace examples {

class ThreadPool {
 public:
  using Task = std::function<void()>;

  explicit ThreadPool(int numThreads) {
    for (int i = 0; i < numThreads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~ThreadPool() { stop(); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void run(Task task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      tasks_.push_back(std::move(task));
    }
    cond_.notify_one();
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cond_.notify_all();
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void work() {
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cond_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping, and nothing left to do
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable cond_;
  std::deque<Task> tasks_;  // guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace examples
}  // namespace muon
