#include "muon/net/internal/TimerQueue.h"

#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cerrno>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"

namespace muon {
namespace net {

namespace {

std::atomic<int64_t> g_numCreated{0};

int createTimerfd() {
  int fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd < 0) LOG_SYSFATAL << "timerfd_create";
  return fd;
}

// Arms the timerfd at an absolute monotonic time (0 disarms). Absolute, so
// the time spent between computing the deadline and this call is not lost.
void armTimerfd(int timerfd, int64_t expirationMicros) {
  struct itimerspec spec {};
  spec.it_value.tv_sec = static_cast<time_t>(expirationMicros / 1000000);
  spec.it_value.tv_nsec = static_cast<long>(expirationMicros % 1000000) * 1000;
  if (expirationMicros > 0 && spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) {
    spec.it_value.tv_nsec = 1;  // all zero would disarm
  }
  if (::timerfd_settime(timerfd, TFD_TIMER_ABSTIME, &spec, nullptr) < 0) {
    LOG_SYSERR << "timerfd_settime";
  }
}

}  // namespace

int64_t TimerQueue::nowMonotonicMicros() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

TimerQueue::TimerQueue(EventLoop* loop)
    : loop_(loop),
      timerfd_(createTimerfd()),
      timerfdChannel_(loop, timerfd_),
      runningSequence_(0),
      runningCancelled_(false),
      armedExpiration_(0) {
  timerfdChannel_.setReadCallback([this](Timestamp) { handleRead(); });
  timerfdChannel_.enableReading();
}

TimerQueue::~TimerQueue() {
  timerfdChannel_.disableAll();
  timerfdChannel_.remove();
  ::close(timerfd_);
}

TimerId TimerQueue::addTimer(TimerCallback cb, int64_t when, int64_t intervalMicros) {
  int64_t sequence = g_numCreated.fetch_add(1, std::memory_order_relaxed) + 1;
  Timer timer{std::move(cb), when, intervalMicros};
  if (loop_->isInLoopThread()) {
    addTimerInLoop(sequence, std::move(timer));
  } else {
    // std::function needs a copyable functor, and Timer is one.
    loop_->queueInLoop([this, sequence, timer]() mutable { addTimerInLoop(sequence, std::move(timer)); });
  }
  return TimerId(sequence);
}

void TimerQueue::cancel(TimerId timerId) {
  loop_->runInLoop([this, timerId] { cancelInLoop(timerId); });
}

void TimerQueue::addTimerInLoop(int64_t sequence, Timer timer) {
  loop_->assertInLoopThread();
  deadlines_.insert(Entry(timer.expiration, sequence));
  timers_.emplace(sequence, std::move(timer));
  resetTimerfd();
}

void TimerQueue::cancelInLoop(TimerId timerId) {
  loop_->assertInLoopThread();
  if (timerId.sequence() == runningSequence_) {
    // Cancelled from its own callback: it is out of timers_ while it runs;
    // remember not to re-arm it.
    runningCancelled_ = true;
    return;
  }
  auto it = timers_.find(timerId.sequence());
  if (it == timers_.end()) return;  // fired already, or cancelled twice
  // Also right for a timer that expired in the batch being run: it is out of
  // deadlines_ but still in timers_, and handleRead skips what it can't find.
  deadlines_.erase(Entry(it->second.expiration, timerId.sequence()));
  timers_.erase(it);
  resetTimerfd();
}

void TimerQueue::handleRead() {
  loop_->assertInLoopThread();
  uint64_t howmany;
  ssize_t n = ::read(timerfd_, &howmany, sizeof howmany);
  if (n != static_cast<ssize_t>(sizeof howmany) && errno != EAGAIN) {
    LOG_SYSERR << "TimerQueue::handleRead reads " << n << " bytes";
  }
  armedExpiration_ = 0;  // the timerfd fired, so it is disarmed now
  const int64_t now = nowMonotonicMicros();

  // Take the expired batch out of deadlines_ first: callbacks may add and
  // cancel timers while it runs.
  std::vector<int64_t> expired;
  auto end = deadlines_.lower_bound(Entry(now, INT64_MAX));
  for (auto it = deadlines_.begin(); it != end; ++it) expired.push_back(it->second);
  deadlines_.erase(deadlines_.begin(), end);

  for (int64_t sequence : expired) {
    auto it = timers_.find(sequence);
    if (it == timers_.end()) continue;  // cancelled by an earlier callback of this batch
    Timer timer = std::move(it->second);
    timers_.erase(it);
    runningSequence_ = sequence;
    runningCancelled_ = false;
    timer.callback();
    runningSequence_ = 0;
    if (timer.interval > 0 && !runningCancelled_) {
      // Next deadline on the original grid; if we fell behind by more than
      // one interval, restart from now instead of firing a burst.
      int64_t next = timer.expiration + timer.interval;
      const int64_t after = nowMonotonicMicros();
      if (next <= after) next = after + timer.interval;
      timer.expiration = next;
      deadlines_.insert(Entry(next, sequence));
      timers_.emplace(sequence, std::move(timer));
    }
  }
  resetTimerfd();
}

void TimerQueue::resetTimerfd() {
  int64_t earliest = deadlines_.empty() ? 0 : deadlines_.begin()->first;
  if (earliest == armedExpiration_) return;
  armedExpiration_ = earliest;
  armTimerfd(timerfd_, earliest);
}

}  // namespace net
}  // namespace muon
