// TscClock: the wall clock, read from the CPU's time-stamp counter.
//
// Every log line needs the time to the microsecond, and clock_gettime, even
// through the vDSO, is a large share of a LOG_INFO; reading the counter and
// scaling it costs about half as much (docs/logging.md has the figures). The scale is recalibrated against
// CLOCK_REALTIME every kResyncInterval (by whichever thread notices it is
// due), so the result follows NTP adjustments, and a step of the wall clock
// shows within that interval. Between two calibrations the error stays
// within a few microseconds, and the scale gets better the longer the
// process runs.
//
// The counter is used wherever the CPU says it is invariant (one rate in
// every power state: CPUID 0x80000007 EDX bit 8), on x86-64, whatever clock
// source the kernel chose for itself; otherwise, or with MUON_TSC=0 in the
// environment, now() is Timestamp::now(). The error bound is in
// docs/logging.md ("The clock"). Any thread may call now().
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "muon/base/Timestamp.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace muon {

namespace detail {
// Changes whenever TscClock publishes a new calibration (TscClock.cc).
extern std::atomic<uint32_t> g_tscCalibration;
// Whether now() reads the counter (usingTsc()), for inline readers.
extern std::atomic<bool> g_tscInUse;
// For tests: runs f(arg) as a calibration publishes (its sequence odd, other
// calibrations kept out), as if this thread were calibrating meanwhile.
void whileCalibrating(void (*f)(void*), void* arg);
}  // namespace detail

class TscClock {
 public:
  static constexpr int kResyncIntervalMs = 100;

  static Timestamp now();
  // Whether now() reads the counter (false during the first few
  // milliseconds of a process, while the first scale is measured, and
  // always false where counterAvailable() is not).
  static bool usingTsc();
  // Whether now() will read the counter once the first scale is measured:
  // the CPU's counter is invariant and MUON_TSC=0 is not set. Fixed for the
  // life of the process, so a caller can tell which mode to expect instead
  // of waiting for one that may never come.
  static bool counterAvailable();
  // What the CPU says of its counter (CPUID), whatever MUON_TSC says.
  static bool cpuHasInvariantCounter();

  // For timing short intervals (logbench's latency samples): counts() is the
  // counter, read with a fence on both sides so that neither earlier nor later
  // work moves across the read, while usingTsc(); otherwise CLOCK_MONOTONIC in
  // nanoseconds. nanosPerCount() is the latest calibrated scale (1 for the
  // fallback). Two readings compare only if usingTsc() did not change between
  // them; it turns true once, at the first now() kWarmupMs or more after the
  // process started (where the kernel uses the counter).
  // Short, because until then no statement is a record (Logger takes them
  // all, on the caller); long enough that the first scale, measured from
  // the tightest of a few paired reads, is off by far less than the
  // microsecond a line shows before the next calibration refines it.
  static constexpr int kWarmupMs = 5;
  static uint64_t counts();
  static double nanosPerCount();

  // For callers that stamp many events from one thread (Logger's lines): a
  // span of counter readings that all fall in one wall-clock second, inside
  // which the microsecond is one multiply away, with no shared state read
  // but the calibration's generation. A window ends at the end of its
  // second, at the next calibration due (so the clock keeps following
  // CLOCK_REALTIME) and when any thread publishes a new calibration. Each
  // thread keeps its own; it is a plain value.
  struct SecondWindow {
    uint64_t beginCount = 0;
    uint64_t spanCounts = 0;  // 0: an empty window, which covers nothing
    unsigned __int128 beginMicro = 0;  // microseconds into `second` at beginCount, 64 fraction bits
    uint64_t microsPerCount = 0;       // 0.64 fixed point
    int64_t second = 0;                // since the epoch
    uint32_t calibration = 0;

    bool covers(uint64_t count) const {
      return count - beginCount < spanCounts &&
             calibration == detail::g_tscCalibration.load(std::memory_order_relaxed);
    }
    // The microsecond within `second` of a count the window covers: 0..999999.
    int microAt(uint64_t count) const {
      unsigned __int128 micro = beginMicro + static_cast<unsigned __int128>(count - beginCount) * microsPerCount;
      return static_cast<int>(static_cast<uint64_t>(micro >> 64));
    }
  };
  // now(), and `*window` made the window around it (empty while now() does
  // not read the counter, or while a calibration is due and another thread
  // is making it).
  static Timestamp nowAndWindow(SecondWindow* window);
  // The time of a counter reading taken while usingTsc() (now or earlier),
  // by the latest calibration, and `*window` made the window of its second
  // from that reading on (empty if the scale does not allow one). For a
  // thread that stamps events with readCounter() and converts them later,
  // in order (AsyncLogging's backend); it should call now() now and then, so
  // that the calibration keeps following CLOCK_REALTIME.
  static Timestamp atCount(uint64_t count, SecondWindow* window);
  // usingTsc(), inline: whether readCounter() readings are times atCount() converts.
  static bool countsAreTime() { return detail::g_tscInUse.load(std::memory_order_relaxed); }

  // readCounter()'s eight bytes, stored at `at` (any alignment) in the
  // machine's order: on x86 the two halves rdtsc gives, as they come.
  static void storeCounter(char* at) {
#if defined(__x86_64__)
    uint32_t low, high;
    __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
    std::memcpy(at, &low, sizeof low);
    std::memcpy(at + sizeof low, &high, sizeof high);
#else
    const uint64_t count = readCounter();
    std::memcpy(at, &count, sizeof count);
#endif
  }
  // The raw counter, to look up in a window (0 where there is none).
  static uint64_t readCounter() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return 0;
#endif
  }
};

}  // namespace muon
