#include "muon/base/TscClock.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace muon {

std::atomic<uint32_t> detail::g_tscCalibration{0};
std::atomic<bool> detail::g_tscInUse{false};

namespace {

constexpr uint64_t kNanosPerSecond = 1000 * 1000 * 1000;
// The first scale is measured over this much time, using clock_gettime meanwhile.
constexpr uint64_t kWarmupNanos = static_cast<uint64_t>(TscClock::kWarmupMs) * 1000 * 1000;
// A calibration this far off the prediction is a step of the wall clock, not
// drift: the scale is then kept and only the base moved.
constexpr int64_t kStepNanos = 1000 * 1000;

uint64_t realtimeNanos() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNanosPerSecond + static_cast<uint64_t>(ts.tv_nsec);
}

#if defined(__x86_64__)
uint64_t readTsc() { return __rdtsc(); }

uint64_t readTscFenced() {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

// CPUID leaf 0x80000007, EDX bit 8: the counter runs at one rate in every
// power and sleep state (Intel's "invariant TSC", AMD's "TscInvariant"; Linux
// shows it as constant_tsc and nonstop_tsc). Such a counter is a clock
// whatever the kernel chose as its own clock source: guests often boot with
// kvm-clock and tsc=unstable on CPUs whose counter is invariant, because the
// kernel wants guarantees across live migration that a clock recalibrated
// against CLOCK_REALTIME every kResyncIntervalMs does not need.
bool cpuHasInvariantTsc() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
  if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx)) return false;
  return (edx & (1u << 8)) != 0;
}
#else
uint64_t readTsc() { return 0; }
uint64_t readTscFenced() { return 0; }
bool cpuHasInvariantTsc() { return false; }
#endif

// One (tsc, realtime) pair, the tsc taken half-way through the clock_gettime
// call; the tightest of three tries.
void samplePair(uint64_t* tsc, uint64_t* ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 3; ++i) {
    uint64_t before = readTsc();
    uint64_t now = realtimeNanos();
    uint64_t after = readTsc();
    if (after - before < best) {
      best = after - before;
      *tsc = before + (after - before) / 2;
      *ns = now;
    }
  }
}

// The conversion tsc -> ns: ns = baseNs + ((tsc - baseTsc) * scale) >> 32.
// Published under a sequence lock, whose word is detail::g_tscCalibration
// (SecondWindow reads it too, to notice a new calibration): readers never
// wait, and retry in the rare case a calibration ran while they read. The
// fields are stored with release and loaded with acquire instead of relaxed
// plus fences: the same order
// (the odd sequence is seen before any new field; the second look at the
// sequence comes after every field is read), plain moves on x86, and
// ThreadSanitizer understands it (it does not model fences).
struct Calibration {
  std::atomic<uint64_t> baseTsc{0};
  std::atomic<uint64_t> baseNs{0};
  std::atomic<uint64_t> scale{0};  // ns per tick, 32.32 fixed point
  std::atomic<uint64_t> resyncTsc{0};
};

enum class Mode { kSyscall, kWarmup, kTsc };

struct State {
  State() {
    if (TscClock::counterAvailable()) {
      samplePair(&anchorTsc, &anchorNs);
      mode.store(Mode::kWarmup, std::memory_order_release);
    }
  }

  std::atomic<Mode> mode{Mode::kSyscall};
  std::atomic_flag calibrating = ATOMIC_FLAG_INIT;
  // The long baseline the scale is measured over; only the calibrating
  // thread touches these after construction.
  uint64_t anchorTsc = 0;
  uint64_t anchorNs = 0;
  Calibration cal;
};

State g_state;

uint64_t convert(uint64_t tsc, uint64_t baseTsc, uint64_t baseNs, uint64_t scale) {
  // Signed: a thread may read the counter just before another calibrates.
  int64_t ticks = static_cast<int64_t>(tsc - baseTsc);
  __int128 delta = (static_cast<__int128>(ticks) * static_cast<__int128>(scale)) >> 32;
  return baseNs + static_cast<uint64_t>(static_cast<int64_t>(delta));
}

// `baseline` is how long the scale was measured over. While it is short, the
// scale is less sure, so the next calibration comes sooner (a quarter of the
// baseline, at least 1 ms, at most kResyncIntervalMs).
void publish(uint64_t tsc, uint64_t ns, uint64_t scale, uint64_t baseline) {
  Calibration& cal = g_state.cal;
  uint32_t seq = detail::g_tscCalibration.load(std::memory_order_relaxed);
  detail::g_tscCalibration.store(seq + 1, std::memory_order_relaxed);
  cal.baseTsc.store(tsc, std::memory_order_release);
  cal.baseNs.store(ns, std::memory_order_release);
  cal.scale.store(scale, std::memory_order_release);
  uint64_t intervalNs = baseline / 4;
  const uint64_t kMaxInterval = static_cast<uint64_t>(TscClock::kResyncIntervalMs) * 1000 * 1000;
  if (intervalNs < 1000 * 1000) intervalNs = 1000 * 1000;
  if (intervalNs > kMaxInterval) intervalNs = kMaxInterval;
  uint64_t interval = static_cast<uint64_t>((static_cast<unsigned __int128>(intervalNs) << 32) / scale);
  cal.resyncTsc.store(tsc + interval, std::memory_order_release);
  detail::g_tscCalibration.store(seq + 2, std::memory_order_release);
}

// Measures the scale over the whole time since the anchor. Called by one
// thread at a time (the `calibrating` flag).
void calibrate() {
  uint64_t tsc = 0, ns = 0;
  samplePair(&tsc, &ns);
  Calibration& cal = g_state.cal;
  uint64_t oldScale = cal.scale.load(std::memory_order_relaxed);
  if (oldScale != 0) {
    uint64_t predicted = convert(tsc, cal.baseTsc.load(std::memory_order_relaxed),
                                 cal.baseNs.load(std::memory_order_relaxed), oldScale);
    int64_t error = static_cast<int64_t>(ns - predicted);
    if (error > kStepNanos || error < -kStepNanos) {
      // The wall clock was set: start a new baseline from here.
      g_state.anchorTsc = tsc;
      g_state.anchorNs = ns;
      publish(tsc, ns, oldScale, 0);
      return;
    }
  }
  uint64_t ticks = tsc - g_state.anchorTsc;
  uint64_t nanos = ns - g_state.anchorNs;
  if (ticks == 0) return;
  uint64_t scale = static_cast<uint64_t>((static_cast<unsigned __int128>(nanos) << 32) / ticks);
  if (scale == 0) return;
  publish(tsc, ns, scale, nanos);
}

bool tryCalibrate() {
  if (g_state.calibrating.test_and_set(std::memory_order_acquire)) return false;
  calibrate();
  g_state.calibrating.clear(std::memory_order_release);
  return true;
}

// Waits for the calibration under way, if any, and keeps others out until
// releaseCalibration().
void holdCalibration() {
  while (g_state.calibrating.test_and_set(std::memory_order_acquire)) sched_yield();
}
void releaseCalibration() { g_state.calibrating.clear(std::memory_order_release); }

// fork() copies only the calling thread: a child that inherited a
// calibration another thread was publishing (its sequence odd, for good)
// would spin at its first reading of the clock. So the fork holds the
// calibration, and both sides then release it.
struct AtForkRegistration {
  AtForkRegistration() {
    ::pthread_atfork(&holdCalibration, &releaseCalibration, &releaseCalibration);
  }
};
AtForkRegistration g_atForkRegistration;

Timestamp fromNanos(uint64_t ns) { return Timestamp(static_cast<int64_t>(ns / 1000)); }

// One consistent read of the calibration. (This and nowNanos are forced
// inline: they are the whole of now(), which LOG_EVERY_T calls per statement.)
struct Snapshot {
  uint32_t sequence;
  uint64_t baseTsc, baseNs, scale, resyncTsc;
};
inline __attribute__((always_inline)) Snapshot readCalibration() {
  Calibration& cal = g_state.cal;
  Snapshot s;
  for (;;) {
    s.sequence = detail::g_tscCalibration.load(std::memory_order_acquire);
    s.baseTsc = cal.baseTsc.load(std::memory_order_acquire);
    s.baseNs = cal.baseNs.load(std::memory_order_acquire);
    s.scale = cal.scale.load(std::memory_order_acquire);
    s.resyncTsc = cal.resyncTsc.load(std::memory_order_acquire);
    if ((s.sequence & 1) == 0 &&
        detail::g_tscCalibration.load(std::memory_order_relaxed) == s.sequence) {
      return s;
    }
  }
}

// The time in nanoseconds, from the counter once it is in use (with `*snap`
// the calibration it was converted with and `*tsc` the reading), from
// CLOCK_REALTIME otherwise (then *tsc is 0).
inline __attribute__((always_inline)) uint64_t nowNanos(Snapshot* snap, uint64_t* tsc) {
  *tsc = 0;
  Mode mode = g_state.mode.load(std::memory_order_acquire);
  if (mode != Mode::kTsc) {
    uint64_t ns = realtimeNanos();
    if (mode == Mode::kWarmup && ns - g_state.anchorNs >= kWarmupNanos && tryCalibrate()) {
      g_state.mode.store(Mode::kTsc, std::memory_order_release);
      detail::g_tscInUse.store(true, std::memory_order_release);
    }
    return ns;
  }
  uint64_t t = readTsc();
  *snap = readCalibration();
  if (static_cast<int64_t>(t - snap->resyncTsc) > 0 && tryCalibrate()) {
    // Read the fresh calibration rather than extrapolate the old one.
    return realtimeNanos();
  }
  *tsc = t;
  return convert(t, snap->baseTsc, snap->baseNs, snap->scale);
}

}  // namespace

void detail::whileCalibrating(void (*f)(void*), void* arg) {
  holdCalibration();
  const uint32_t seq = detail::g_tscCalibration.load(std::memory_order_relaxed);
  detail::g_tscCalibration.store(seq + 1, std::memory_order_relaxed);
  f(arg);
  detail::g_tscCalibration.store(seq + 2, std::memory_order_release);
  releaseCalibration();
}

Timestamp TscClock::now() {
  Snapshot snap;
  uint64_t tsc;
  return fromNanos(nowNanos(&snap, &tsc));
}

namespace {

// The window of the second `ns` falls in, from the reading `tsc` on, by
// the calibration `snap`; at most up to `limit` counts on. Empty if the
// counter is slower than 1 kHz.
void makeWindow(const Snapshot& snap, uint64_t tsc, uint64_t ns, uint64_t limit,
                TscClock::SecondWindow* window) {
  // Microseconds per count, 0.64 fixed point, from nanoseconds per count in 32.32.
  unsigned __int128 perCount = (static_cast<unsigned __int128>(snap.scale) << 32) / 1000;
  if (perCount == 0 || perCount >> 64 != 0) return;
  constexpr uint64_t kMicrosPerSecond = 1000 * 1000;
  unsigned __int128 beginMicro = (static_cast<unsigned __int128>(ns % kNanosPerSecond) << 64) / 1000;
  unsigned __int128 toSecondEnd =
      ((static_cast<unsigned __int128>(kMicrosPerSecond) << 64) - beginMicro) / perCount;
  window->beginCount = tsc;
  window->spanCounts = toSecondEnd < limit ? static_cast<uint64_t>(toSecondEnd) : limit;
  window->beginMicro = beginMicro;
  window->microsPerCount = static_cast<uint64_t>(perCount);
  window->second = static_cast<int64_t>(ns / kNanosPerSecond);
  window->calibration = snap.sequence;
}

}  // namespace

Timestamp TscClock::nowAndWindow(SecondWindow* window) {
  *window = SecondWindow();
  Snapshot snap;
  uint64_t tsc;
  uint64_t ns = nowNanos(&snap, &tsc);
  // Not from the counter, or a calibration is due: no window this time.
  if (tsc == 0 || static_cast<int64_t>(tsc - snap.resyncTsc) >= 0) return fromNanos(ns);
  makeWindow(snap, tsc, ns, snap.resyncTsc - tsc, window);
  if (window->spanCounts == 0) return fromNanos(ns);
  return Timestamp(window->second * 1000 * 1000 + window->microAt(tsc));
}

Timestamp TscClock::atCount(uint64_t count, SecondWindow* window) {
  *window = SecondWindow();
  const Snapshot snap = readCalibration();
  const uint64_t ns = convert(count, snap.baseTsc, snap.baseNs, snap.scale);
  makeWindow(snap, count, ns, UINT64_MAX, window);
  if (window->spanCounts == 0) return fromNanos(ns);
  return Timestamp(window->second * 1000 * 1000 + window->microAt(count));
}

bool TscClock::cpuHasInvariantCounter() { return cpuHasInvariantTsc(); }

bool TscClock::counterAvailable() {
  // Read once: the answer must not change under a running process.
  static const bool available = [] {
    const char* setting = std::getenv("MUON_TSC");
    if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
    return cpuHasInvariantTsc();
  }();
  return available;
}

bool TscClock::usingTsc() { return g_state.mode.load(std::memory_order_acquire) == Mode::kTsc; }

uint64_t TscClock::counts() {
  if (usingTsc()) return readTscFenced();
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNanosPerSecond + static_cast<uint64_t>(ts.tv_nsec);
}

double TscClock::nanosPerCount() {
  if (!usingTsc()) return 1.0;
  uint64_t scale = g_state.cal.scale.load(std::memory_order_acquire);
  return static_cast<double>(scale) / 4294967296.0;  // 32.32 fixed point
}

}  // namespace muon
