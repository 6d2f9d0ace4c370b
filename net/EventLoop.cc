#include "muon/net/EventLoop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/internal/Poller.h"
#include "muon/net/internal/TimerQueue.h"

namespace muon {
namespace net {

namespace {

thread_local EventLoop* t_loopInThisThread = nullptr;

// Long enough to cost nothing when idle; the loop is woken for work anyway.
constexpr int kPollTimeMs = 10000;

int createEventfd() {
  int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) LOG_SYSFATAL << "eventfd";
  return fd;
}

// MUON_BUSY_POLL_US: a whole number of microseconds; anything else is 0.
int busyPollFromEnvironment() {
  const char* value = std::getenv("MUON_BUSY_POLL_US");
  if (value == nullptr || *value == '\0') return 0;
  char* end = nullptr;
  long us = std::strtol(value, &end, 10);
  if (*end != '\0' || us < 0 || us > 1000 * 1000 * 1000) {
    LOG_WARN << "MUON_BUSY_POLL_US=" << value << " is not a number of microseconds; busy polling off";
    return 0;
  }
  return static_cast<int>(us);
}

EventLoop::Options resolve(EventLoop::Options options) {
  if (options.busyPollMicros < 0) options.busyPollMicros = busyPollFromEnvironment();
  if (options.engine == EventLoop::Engine::kFromEnvironment) {
    const char* uring = std::getenv("MUON_USE_URING");
    if (std::getenv("MUON_USE_POLL") != nullptr) {
      options.engine = EventLoop::Engine::kPoll;
    } else if (uring != nullptr && *uring != '\0' && std::string(uring) != "0") {
      options.engine = EventLoop::Engine::kUring;
    } else {
      options.engine = EventLoop::Engine::kEpoll;
    }
  }
  return options;
}

// The wall clock's lead over the monotonic one, read so that the two reads
// lie at most kMaxSkewMicros apart (else the tightest of a few tries): two
// runAt times further apart than twice that keep their order however long
// the caller is preempted between calls.
constexpr int64_t kMaxSkewMicros = 20;
int64_t wallMinusMonotonicMicros() {
  int64_t best = 0;
  int64_t bestSkew = INT64_MAX;
  for (int i = 0; i < 16 && bestSkew > kMaxSkewMicros; ++i) {
    const int64_t before = TimerQueue::nowMonotonicMicros();
    const int64_t wall = Timestamp::now().microSecondsSinceEpoch();
    const int64_t after = TimerQueue::nowMonotonicMicros();
    if (after - before < bestSkew) {
      bestSkew = after - before;
      best = wall - before - bestSkew / 2;
    }
  }
  return best;
}

int64_t toMicros(double seconds) {
  return seconds <= 0 ? 0 : static_cast<int64_t>(seconds * 1e6);
}

}  // namespace

EventLoop* EventLoop::getEventLoopOfCurrentThread() { return t_loopInThisThread; }

EventLoop::EventLoop() : EventLoop(Options()) {}

EventLoop::EventLoop(const Options& options)
    : threadId_(CurrentThread::tid()),
      options_(resolve(options)),
      engine_(options_.engine),
      lastActiveMicros_(0),
      looping_(false),
      quit_(false),
      eventHandling_(false),
      callingPendingFunctors_(false),
      iteration_(0),
      poller_(Poller::newPoller(this, &engine_)),
      wakeupFd_(createEventfd()),
      wakeupChannel_(std::make_unique<Channel>(this, wakeupFd_)),
      currentActiveIndex_(0) {
  LOG_DEBUG << "EventLoop created " << static_cast<const void*>(this) << " in thread " << threadId_;
  if (t_loopInThisThread != nullptr) {
    LOG_FATAL << "Another EventLoop " << static_cast<const void*>(t_loopInThisThread)
              << " exists in this thread " << threadId_ << "; one loop per thread";
  }
  t_loopInThisThread = this;
  timerQueue_ = std::make_unique<TimerQueue>(this);
  wakeupChannel_->setReadCallback([this](Timestamp) { handleWakeupRead(); });
  wakeupChannel_->enableReading();
  LoopRegistry::add(this, &counters_);
}

EventLoop::~EventLoop() {
  LOG_DEBUG << "EventLoop " << static_cast<const void*>(this) << " of thread " << threadId_
            << " destructs in thread " << CurrentThread::tid();
  LoopRegistry::remove(this);
  assert(!looping_.load());
  // Run what is still queued (say, connectDestroyed of a closing server):
  // dropping it would destroy objects whose channels are still registered.
  // A functor may queue another (a forced close queues its connection's
  // connectDestroyed), so drain until nothing is left; one that queues
  // itself forever is cut off rather than hang the destructor.
  constexpr int kMaxDrainRounds = 100;
  for (int round = 0; queueSize() > 0; ++round) {
    if (round == kMaxDrainRounds) {
      LOG_ERROR << "EventLoop " << static_cast<const void*>(this) << " destroyed with "
                << queueSize() << " functors that keep queueing more; dropped";
      break;
    }
    doPendingFunctors();
  }
  wakeupChannel_->disableAll();
  wakeupChannel_->remove();
  timerQueue_.reset();
  ::close(wakeupFd_);
  t_loopInThisThread = nullptr;
}

void EventLoop::loop() {
  assert(!looping_.load());
  assertInLoopThread();
  looping_ = true;
  LOG_TRACE << "EventLoop " << static_cast<const void*>(this) << " start looping";

  const int64_t busyPollMicros = options_.busyPollMicros;
  while (!quit_.load(std::memory_order_acquire)) {
    activeChannels_.clear();
    int timeoutMs = kPollTimeMs;
    int64_t now = 0;
    if (busyPollMicros > 0) {
      // Spin (poll without blocking) until busyPollMicros have passed
      // without an event; quit() and timers are seen on every turn.
      now = TimerQueue::nowMonotonicMicros();
      if (now - lastActiveMicros_ < busyPollMicros) timeoutMs = 0;
    }
    pollReturnTime_ = poller_->poll(timeoutMs, &activeChannels_);

    // Single writer: a plain load and store, no locked instruction.
    iteration_.store(iteration_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    eventHandling_ = true;
    for (currentActiveIndex_ = 0; currentActiveIndex_ < activeChannels_.size(); ++currentActiveIndex_) {
      // removeChannel() nulls the entries of channels removed by an earlier
      // callback of this batch (they may be gone already).
      Channel* channel = activeChannels_[currentActiveIndex_];
      if (channel != nullptr) channel->handleEvent(pollReturnTime_);
    }
    const size_t completions = poller_->dispatchCompletions();
    eventHandling_ = false;
    if (busyPollMicros > 0 && (!activeChannels_.empty() || completions > 0 || timeoutMs != 0)) {
      // An event, or the end of a block: the spinning window starts again.
      lastActiveMicros_ = timeoutMs == 0 ? now : TimerQueue::nowMonotonicMicros();
    }
    doPendingFunctors();
    // The iteration's work, from the poll's return: one clock read more.
    const int64_t busy = Timestamp::now().microSecondsSinceEpoch() - pollReturnTime_.microSecondsSinceEpoch();
    if (busy > 0) counters_.busyMicros.add(static_cast<uint64_t>(busy));
  }
  // Functors queued before quit() was seen still run: quit() must not drop
  // work another thread has handed over.
  doPendingFunctors();

  LOG_TRACE << "EventLoop " << static_cast<const void*>(this) << " stop looping";
  quit_ = false;  // so loop() can be called again
  looping_ = false;
}

const char* EventLoop::engineName() const {
  switch (engine_) {
    case Engine::kEpoll: return "epoll";
    case Engine::kPoll: return "poll";
    case Engine::kUring: return "io_uring";
    case Engine::kFromEnvironment: break;
  }
  return "unknown";
}

void EventLoop::quit() {
  quit_.store(true, std::memory_order_release);
  // From another thread the loop may be blocked in poll: wake it. (In the
  // loop thread it sees quit_ at the end of this iteration.)
  if (!isInLoopThread()) wakeup();
}

void EventLoop::runInLoop(Functor cb) {
  if (isInLoopThread()) {
    cb();
  } else {
    queueInLoop(std::move(cb));
  }
}

void EventLoop::queueInLoop(Functor cb) {
  bool wasEmpty;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wasEmpty = pendingFunctors_.empty();
    pendingFunctors_.push_back(std::move(cb));
  }
  // No lost wake-up, fewer eventfd writes: from another thread, only the
  // functor that makes the queue non-empty writes the eventfd; whoever made
  // it non-empty before us has already woken the loop (or is the loop
  // thread inside an event handler, which runs the queue before it polls
  // again). In the loop thread, an event handler needs no wake-up for the
  // same reason; a functor queued while the queue is being run does (the
  // swapped-out batch does not contain it), and so does one queued outside
  // loop() (else it would wait for the poll timeout).
  const bool wake = isInLoopThread() ? (callingPendingFunctors_ || !eventHandling_) : wasEmpty;
  if (wake) wakeup();
}

size_t EventLoop::queueSize() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pendingFunctors_.size();
}

TimerId EventLoop::runAt(Timestamp time, TimerCallback cb) {
  const int64_t at = time.microSecondsSinceEpoch();
  int64_t when;
  // A time too far off for the difference is as good as never, or past.
  if (__builtin_sub_overflow(at, wallMinusMonotonicMicros(), &when)) when = at < 0 ? 1 : INT64_MAX;
  return timerQueue_->addTimer(std::move(cb), std::max<int64_t>(when, 1), 0);
}

TimerId EventLoop::runAfter(double delaySeconds, TimerCallback cb) {
  int64_t when = TimerQueue::nowMonotonicMicros() + toMicros(delaySeconds);
  return timerQueue_->addTimer(std::move(cb), when, 0);
}

TimerId EventLoop::runEvery(double intervalSeconds, TimerCallback cb) {
  // A zero interval would fire on every iteration; take 1 us as the least.
  int64_t interval = std::max<int64_t>(toMicros(intervalSeconds), 1);
  int64_t when = TimerQueue::nowMonotonicMicros() + interval;
  return timerQueue_->addTimer(std::move(cb), when, interval);
}

void EventLoop::cancel(TimerId timerId) { timerQueue_->cancel(timerId); }

int EventLoop::updateChannel(Channel* channel) {
  assert(channel->ownerLoop() == this);
  assertInLoopThread();
  return poller_->updateChannel(channel);
}

void EventLoop::removeChannel(Channel* channel) {
  assert(channel->ownerLoop() == this);
  assertInLoopThread();
  if (eventHandling_) {
    // A channel removed while events are handled may still be waiting in
    // this batch (Connector::stop from another fd's callback): drop its
    // pending entry, so its callback is not called on a dead channel.
    for (size_t i = currentActiveIndex_ + 1; i < activeChannels_.size(); ++i) {
      if (activeChannels_[i] == channel) activeChannels_[i] = nullptr;
    }
  }
  poller_->removeChannel(channel);
}

bool EventLoop::hasChannel(Channel* channel) {
  assert(channel->ownerLoop() == this);
  assertInLoopThread();
  return poller_->hasChannel(channel);
}

void EventLoop::abortNotInLoopThread() {
  LOG_FATAL << "EventLoop::abortNotInLoopThread - EventLoop " << static_cast<const void*>(this)
            << " was created in threadId_ = " << threadId_
            << ", current thread id = " << CurrentThread::tid();
}

void EventLoop::wakeup() {
  uint64_t one = 1;
  ssize_t n;
  do {
    n = ::write(wakeupFd_, &one, sizeof one);
  } while (n < 0 && errno == EINTR);
  // EAGAIN means the counter is saturated: the loop is woken anyway.
  if (n != static_cast<ssize_t>(sizeof one) && errno != EAGAIN) {
    LOG_SYSERR << "EventLoop::wakeup() writes " << n << " bytes instead of 8";
  }
}

void EventLoop::handleWakeupRead() {
  uint64_t one = 0;
  ssize_t n;
  do {
    n = ::read(wakeupFd_, &one, sizeof one);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof one) && errno != EAGAIN) {
    LOG_SYSERR << "EventLoop::handleWakeupRead() reads " << n << " bytes instead of 8";
  }
}

void EventLoop::doPendingFunctors() {
  std::vector<Functor> functors;
  callingPendingFunctors_ = true;
  {
    // Swap, then run unlocked: a functor may queue more (it is then run on
    // the next iteration), and other threads are not held up.
    std::lock_guard<std::mutex> lock(mutex_);
    functors.swap(pendingFunctors_);
  }
  for (const Functor& functor : functors) functor();
  callingPendingFunctors_ = false;
}

}  // namespace net
}  // namespace muon
