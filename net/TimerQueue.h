// TimerQueue: the timers of one EventLoop, on one timerfd. Internal header;
// use EventLoop::runAt/runAfter/runEvery/cancel.
//
// Deadlines are on CLOCK_MONOTONIC and the timerfd is armed with an
// absolute monotonic time, so a wall-clock jump neither stalls nor fires a
// timer. addTimer and cancel are safe from any thread; the rest belongs to
// the loop thread.
#pragma once

#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "muon/net/Callbacks.h"
#include "muon/net/Channel.h"
#include "muon/net/TimerId.h"

namespace muon {
namespace net {

class EventLoop;

class TimerQueue {
 public:
  explicit TimerQueue(EventLoop* loop);
  ~TimerQueue();
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // Runs cb at `when` (monotonic microseconds, see nowMonotonicMicros), then
  // every `intervalMicros` if it is > 0.
  TimerId addTimer(TimerCallback cb, int64_t when, int64_t intervalMicros);
  void cancel(TimerId timerId);

  static int64_t nowMonotonicMicros();

 private:
  struct Timer {
    TimerCallback callback;
    int64_t expiration;  // monotonic microseconds
    int64_t interval;    // 0: one-shot
  };
  // (expiration, sequence): ordered by deadline, ties broken by creation order.
  using Entry = std::pair<int64_t, int64_t>;

  void addTimerInLoop(int64_t sequence, Timer timer);
  void cancelInLoop(TimerId timerId);
  void handleRead();
  void resetTimerfd();

  EventLoop* const loop_;
  const int timerfd_;
  Channel timerfdChannel_;
  std::set<Entry> deadlines_;
  std::unordered_map<int64_t, Timer> timers_;  // by sequence: the live timers
  // While expired timers run: the sequence of the one running, and whether
  // it cancelled itself (then a repeating timer is not re-armed).
  int64_t runningSequence_;
  bool runningCancelled_;
  int64_t armedExpiration_;  // what the timerfd is set to; 0 if disarmed
};

}  // namespace net
}  // namespace muon
