// EventLoop: the reactor, one per thread ("one loop per thread").
//
// The thread that constructs an EventLoop owns it and is the only one that
// may call loop() and the channel functions; a second EventLoop in the same
// thread aborts. These are safe from any thread:
//   quit(), runInLoop(), queueInLoop(), queueSize(), runAt(), runAfter(),
//   runEvery(), cancel(), wakeup(), isInLoopThread(), iteration().
// Everything else must run in the loop thread; assertInLoopThread() aborts
// with both thread ids when it does not.
//
// Timers use the monotonic clock through one timerfd: changing the wall
// clock neither stalls nor fires them.
#pragma once

#include <any>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "muon/base/CurrentThread.h"
#include "muon/base/Timestamp.h"
#include "muon/net/Callbacks.h"
#include "muon/net/TimerId.h"

namespace muon {
namespace net {

class Channel;
class Poller;
class TimerQueue;

class EventLoop {
 public:
  using Functor = std::function<void()>;

  EventLoop();
  // Must run in the owner thread, after loop() has returned (or never ran).
  // Functors still queued are run first: dropping them would destroy, say,
  // a TcpConnection whose channel is still registered.
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Runs until quit(). Owner thread only.
  void loop();
  // Makes loop() return after the current iteration. Safe from any thread;
  // functors already queued when loop() sees the request still run.
  void quit();

  // When the last poll returned (wall clock): the receive time of its data.
  Timestamp pollReturnTime() const { return pollReturnTime_; }
  // How many times the loop has polled. Readable from any thread (tests use
  // it to prove the loop is not spinning).
  int64_t iteration() const { return iteration_.load(std::memory_order_relaxed); }

  // Runs cb now if called in the loop thread, else queues it. Safe from any thread.
  void runInLoop(Functor cb);
  // Queues cb to run in the loop thread after the current batch of I/O
  // events; wakes the loop if it may be blocked in poll. Safe from any thread.
  void queueInLoop(Functor cb);
  size_t queueSize() const;

  // Timers. Safe from any thread; callbacks run in the loop thread.
  // runAt converts `time` (wall clock) to a monotonic deadline once, now.
  TimerId runAt(Timestamp time, TimerCallback cb);
  TimerId runAfter(double delaySeconds, TimerCallback cb);
  TimerId runEvery(double intervalSeconds, TimerCallback cb);
  // After cancel() returns in the loop thread, the timer never fires again,
  // even when cancelled from its own callback or from another timer's
  // callback in the same batch. From another thread, the cancel is queued.
  void cancel(TimerId timerId);

  // Internal, for Channel and friends (owner thread only).
  void wakeup();
  void updateChannel(Channel* channel);
  void removeChannel(Channel* channel);
  bool hasChannel(Channel* channel);

  void assertInLoopThread() {
    if (!isInLoopThread()) abortNotInLoopThread();
  }
  bool isInLoopThread() const { return threadId_ == CurrentThread::tid(); }
  bool eventHandling() const { return eventHandling_; }

  // Owner thread only.
  void setContext(std::any context) { context_ = std::move(context); }
  const std::any& getContext() const { return context_; }
  std::any* getMutableContext() { return &context_; }

  // The EventLoop of the calling thread, or nullptr.
  static EventLoop* getEventLoopOfCurrentThread();

 private:
  void abortNotInLoopThread();
  void handleWakeupRead();
  void doPendingFunctors();

  const int threadId_;
  std::atomic<bool> looping_;
  std::atomic<bool> quit_;
  bool eventHandling_;
  bool callingPendingFunctors_;
  std::atomic<int64_t> iteration_;
  Timestamp pollReturnTime_;
  std::unique_ptr<Poller> poller_;
  std::unique_ptr<TimerQueue> timerQueue_;
  const int wakeupFd_;
  std::unique_ptr<Channel> wakeupChannel_;
  std::any context_;

  std::vector<Channel*> activeChannels_;
  size_t currentActiveIndex_;  // the entry of activeChannels_ being handled

  mutable std::mutex mutex_;
  std::vector<Functor> pendingFunctors_;  // guarded by mutex_
};

}  // namespace net
}  // namespace muon
