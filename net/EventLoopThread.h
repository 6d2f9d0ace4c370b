// EventLoopThread: a thread running its own EventLoop.
//
// startLoop() starts the thread and returns its loop once the loop exists.
// The destructor quits the loop and joins the thread. Both are for the
// owner's thread; the returned loop is used as any EventLoop.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "muon/net/EventLoop.h"

namespace muon {
namespace net {


class EventLoopThread {
 public:
  using ThreadInitCallback = std::function<void(EventLoop*)>;

  // cb, if set, runs in the new thread before its loop starts. The loop is
  // made with `options` (by default: from the environment).
  explicit EventLoopThread(ThreadInitCallback cb = ThreadInitCallback(), std::string name = std::string(),
                           EventLoop::Options options = EventLoop::Options());
  ~EventLoopThread();
  EventLoopThread(const EventLoopThread&) = delete;
  EventLoopThread& operator=(const EventLoopThread&) = delete;

  EventLoop* startLoop();
  const std::string& name() const { return name_; }

 private:
  void threadFunc();

  const ThreadInitCallback callback_;
  const EventLoop::Options options_;
  const std::string name_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cond_;
  EventLoop* loop_;  // guarded by mutex_; null before the loop exists and after it ended
};

}  // namespace net
}  // namespace muon
