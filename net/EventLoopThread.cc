#include "muon/net/EventLoopThread.h"

#include <sys/prctl.h>

#include <cassert>

#include "muon/net/EventLoop.h"

namespace muon {
namespace net {

EventLoopThread::EventLoopThread(ThreadInitCallback cb, std::string name, EventLoop::Options options)
    : callback_(std::move(cb)), options_(options), name_(std::move(name)), loop_(nullptr) {}

EventLoopThread::~EventLoopThread() {
  {
    // Under the lock: the thread clears loop_ (under the same lock) before
    // its EventLoop is destroyed, so quit() never reaches a dead loop.
    std::lock_guard<std::mutex> lock(mutex_);
    if (loop_ != nullptr) loop_->quit();
  }
  if (thread_.joinable()) thread_.join();
}

EventLoop* EventLoopThread::startLoop() {
  assert(!thread_.joinable());
  thread_ = std::thread([this] { threadFunc(); });
  std::unique_lock<std::mutex> lock(mutex_);
  cond_.wait(lock, [this] { return loop_ != nullptr; });
  return loop_;
}

void EventLoopThread::threadFunc() {
  // The thread carries the name (what top -H, ps -L and the inspector's
  // loop="..." label show; the kernel keeps 15 characters).
  if (!name_.empty()) ::prctl(PR_SET_NAME, name_.substr(0, 15).c_str(), 0, 0, 0);
  EventLoop loop(options_);
  if (callback_) callback_(&loop);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    loop_ = &loop;
  }
  cond_.notify_one();
  loop.loop();
  std::lock_guard<std::mutex> lock(mutex_);
  loop_ = nullptr;
}

}  // namespace net
}  // namespace muon
