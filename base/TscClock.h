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
// The counter is used only when the kernel itself uses it as its clock
// source (it then trusts it to be constant and in step across CPUs), and only
// on x86-64; otherwise now() is Timestamp::now(). Any thread may call now().
#pragma once

#include <cstdint>

#include "muon/base/Timestamp.h"

namespace muon {

class TscClock {
 public:
  static constexpr int kResyncIntervalMs = 100;

  static Timestamp now();
  // Whether now() reads the counter (false during the first few
  // milliseconds of a process, while the first scale is measured).
  static bool usingTsc();

  // For timing short intervals (logbench's latency samples): counts() is the
  // counter, read with a fence on both sides so that neither earlier nor later
  // work moves across the read, while usingTsc(); otherwise CLOCK_MONOTONIC in
  // nanoseconds. nanosPerCount() is the latest calibrated scale (1 for the
  // fallback). Two readings compare only if usingTsc() did not change between
  // them; it turns true once, at the first now() kWarmupMs or more after the
  // process started (where the kernel uses the counter).
  static constexpr int kWarmupMs = 20;
  static uint64_t counts();
  static double nanosPerCount();
};

}  // namespace muon
