// TickClock: the cheap clock that times each log call for --latency.
//
// Internal to logbench. On x86-64 with an invariant TSC (constant_tsc and
// nonstop_tsc in /proc/cpuinfo) it reads the TSC, fenced so the reads do not
// drift into the timed call; its rate is measured against steady_clock once,
// at the first instance() call. Elsewhere it falls back to
// clock_gettime(CLOCK_MONOTONIC) (ticks are then nanoseconds). Readings are
// not corrected for the clock's own cost: overheadNs() reports that cost so
// the reader can judge how much of a p50 it is.
//
// Any thread may call now(); call instance() once before threads start.
#pragma once

#include <time.h>

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace logbench {

class TickClock {
 public:
  static const TickClock& instance();

  uint64_t now() const {
#if defined(__x86_64__)
    if (useTsc_) {
      // lfence on both sides: earlier work finishes before the read, later
      // work does not start before it.
      _mm_lfence();
      uint64_t t = __rdtsc();
      _mm_lfence();
      return t;
    }
#endif
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
  }

  double nsPerTick() const { return nsPerTick_; }
  const char* source() const { return useTsc_ ? "rdtsc" : "clock_gettime(CLOCK_MONOTONIC)"; }
  // Median of (now() - now()) for back-to-back calls, in nanoseconds: what
  // every latency sample carries on top of the log call itself.
  double overheadNs() const { return overheadNs_; }

  TickClock(const TickClock&) = delete;
  TickClock& operator=(const TickClock&) = delete;

 private:
  TickClock();

  bool useTsc_ = false;
  double nsPerTick_ = 1.0;
  double overheadNs_ = 0.0;
};

}  // namespace logbench
