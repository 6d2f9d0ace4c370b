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
//
// The engine (epoll, poll(2) or io_uring) and busy polling are chosen per
// loop by EventLoop::Options, or by the environment (MUON_USE_URING=1,
// MUON_USE_POLL, MUON_BUSY_POLL_US=N). See docs/net.md.
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
#include "muon/net/LoopCounters.h"
#include "muon/net/TimerId.h"

namespace muon {
namespace net {

class Channel;
class Poller;
class TimerQueue;

class EventLoop {
 public:
  using Functor = std::function<void()>;

  // The kernel interface the loop waits on.
  enum class Engine {
    kFromEnvironment,  // MUON_USE_POLL (set) picks kPoll, else MUON_USE_URING=1 kUring, else kEpoll
    kEpoll,            // epoll(7), level-triggered: the default
    kPoll,             // poll(2): for comparison and debugging
    // io_uring: one system call per iteration submits and waits
    // (docs/net.md). Where the
    // kernel refuses it (io_uring_disabled, seccomp, too old, a missing
    // feature) or muon was built without liburing, the loop takes epoll and
    // logs one warning line per process.
    kUring,
  };

  struct Options {
    Engine engine = Engine::kFromEnvironment;
    // Busy polling: after its last event the loop polls without sleeping
    // for this many microseconds before it blocks. It saves the wake-up of
    // a sleeping thread (tens of microseconds) on every message of a
    // request-response exchange, at the price of a whole core per loop
    // while traffic flows. 0: off (the default, as sleeping is what a
    // shared machine wants); -1: MUON_BUSY_POLL_US, or 0 if unset.
    int busyPollMicros = -1;
  };

  // Options from the environment (kFromEnvironment, busyPollMicros -1).
  EventLoop();
  explicit EventLoop(const Options& options);
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

  // The engine in use (never kFromEnvironment) and its name ("epoll",
  // "poll", "io_uring"). Any thread.
  Engine engine() const { return engine_; }
  const char* engineName() const;
  // The options as resolved: an explicit engine and busy-poll time. Loops
  // of a TcpServer's or TcpClient's threads take their base loop's.
  const Options& options() const { return options_; }

  // When the last poll returned (wall clock): the receive time of its data.
  Timestamp pollReturnTime() const { return pollReturnTime_; }
  // How many times the loop has polled. Readable from any thread (tests use
  // it to prove the loop is not spinning).
  int64_t iteration() const { return iteration_.load(std::memory_order_relaxed); }
  // What the loop has done (LoopCounters.h): written by the loop thread
  // (counters(), for the transports and acceptors of this loop), read by any.
  LoopCounters& counters() { return counters_; }
  const LoopCounters& counters() const { return counters_; }

  // Runs cb now if called in the loop thread, else queues it. Safe from any thread.
  void runInLoop(Functor cb);
  // Queues cb to run in the loop thread after the current batch of I/O
  // events; wakes the loop if it may be blocked in poll. Safe from any thread.
  void queueInLoop(Functor cb);
  size_t queueSize() const;

  // Timers. Safe from any thread; callbacks run in the loop thread.
  // runAt converts `time` (wall clock) to a monotonic deadline once, now, to
  // within about 10 us, however long the caller is preempted: runAt times
  // more than about 20 us apart fire in their order, a time already past
  // fires at once, and a later step of the wall clock does not move it.
  TimerId runAt(Timestamp time, TimerCallback cb);
  TimerId runAfter(double delaySeconds, TimerCallback cb);
  TimerId runEvery(double intervalSeconds, TimerCallback cb);
  // After cancel() returns in the loop thread, the timer never fires again,
  // even when cancelled from its own callback or from another timer's
  // callback in the same batch. From another thread, the cancel is queued.
  void cancel(TimerId timerId);

  // Internal, for Channel and friends (owner thread only). poller() is the
  // engine; TcpConnection and Acceptor ask it for completion-based I/O.
  Poller* poller() const { return poller_.get(); }
  void wakeup();
  // 0, or the errno with which the poller refused the channel's fd (see
  // Poller::updateChannel).
  int updateChannel(Channel* channel);
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
  Options options_;
  Engine engine_;
  int64_t lastActiveMicros_;  // monotonic; when the last busy-poll iteration had work
  std::atomic<bool> looping_;
  std::atomic<bool> quit_;
  bool eventHandling_;
  bool callingPendingFunctors_;
  std::atomic<int64_t> iteration_;
  LoopCounters counters_;
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
