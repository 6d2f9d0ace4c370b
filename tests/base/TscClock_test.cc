#include "muon/base/TscClock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

using muon::Timestamp;
using muon::TscClock;

namespace {

// Each TscClock reading must fall between two clock_gettime readings taken
// around it, give or take the tolerance: a wrong scale, a stale base or a
// broken sequence lock all push readings outside. Run long enough to cover
// the warm-up, the first calibrations and several resync intervals.
TEST(TscClockTest, AgreesWithTheWallClock) {
  constexpr int64_t kToleranceUs = 50;
  auto end = std::chrono::steady_clock::now() +
             std::chrono::milliseconds(3 * TscClock::kResyncIntervalMs);
  int64_t worst = 0;
  long samples = 0;
  while (std::chrono::steady_clock::now() < end) {
    int64_t before = Timestamp::now().microSecondsSinceEpoch();
    int64_t t = TscClock::now().microSecondsSinceEpoch();
    int64_t after = Timestamp::now().microSecondsSinceEpoch();
    int64_t error = t < before ? before - t : (t > after ? t - after : 0);
    if (error > worst) worst = error;
    ++samples;
  }
  EXPECT_GT(samples, 1000);
  EXPECT_LE(worst, kToleranceUs);
}

TEST(TscClockTest, ReadsTheCounterWhenTheKernelDoes) {
  // Past the warm-up, now() must have switched to the counter wherever the
  // kernel's own clock source is the TSC.
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < end) TscClock::now();
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  in >> source;
#if defined(__x86_64__)
  EXPECT_EQ(TscClock::usingTsc(), source == "tsc") << "clock source: " << source;
#else
  EXPECT_FALSE(TscClock::usingTsc());
#endif
}

// counts() differences times nanosPerCount() measure an interval in
// nanoseconds (what logbench's latency samples rely on): a wrong scale, an
// unfenced or mixed source shows as a sleep of 50 ms measured off by more
// than 2%.
TEST(TscClockTest, CountsMeasureIntervalsInNanoseconds) {
  auto warm = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * TscClock::kWarmupMs);
  while (std::chrono::steady_clock::now() < warm) TscClock::now();
  auto wall0 = std::chrono::steady_clock::now();
  uint64_t count0 = TscClock::counts();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  uint64_t count1 = TscClock::counts();
  auto wall1 = std::chrono::steady_clock::now();
  double wallNs = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(wall1 - wall0).count());
  double countedNs = static_cast<double>(count1 - count0) * TscClock::nanosPerCount();
  EXPECT_NEAR(countedNs, wallNs, wallNs * 0.02);
  if (!TscClock::usingTsc()) {
    EXPECT_EQ(TscClock::nanosPerCount(), 1.0);
  }
}

}  // namespace
