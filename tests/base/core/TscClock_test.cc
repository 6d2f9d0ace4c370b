#include "muon/base/TscClock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
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

// What /proc/cpuinfo says of the counter: Linux shows an invariant TSC
// (CPUID 0x80000007 EDX bit 8) as both constant_tsc and nonstop_tsc.
bool cpuinfoShowsInvariantTsc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
  return false;
}

TEST(TscClockTest, TheCounterIsInvariantWhereTheKernelSaysSo) {
#if defined(__x86_64__)
  EXPECT_EQ(TscClock::cpuHasInvariantCounter(), cpuinfoShowsInvariantTsc());
#else
  EXPECT_FALSE(TscClock::cpuHasInvariantCounter());
#endif
}

TEST(TscClockTest, MuonTscZeroTurnsTheCounterOff) {
  const char* setting = std::getenv("MUON_TSC");
  const bool off = setting != nullptr && std::string(setting) == "0";
  EXPECT_EQ(TscClock::counterAvailable(), TscClock::cpuHasInvariantCounter() && !off);
}

// Past the warm-up, now() must have switched to the counter wherever it is
// available, whatever the kernel's own clock source (kvm-clock guests too),
// and never where it is not.
TEST(TscClockTest, ReadsTheCounterWhereItIsAvailable) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * TscClock::kWarmupMs);
  while (std::chrono::steady_clock::now() < end) TscClock::now();
  EXPECT_EQ(TscClock::usingTsc(), TscClock::counterAvailable());
  EXPECT_EQ(TscClock::countsAreTime(), TscClock::counterAvailable());
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

void pastWarmup() {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * TscClock::kWarmupMs);
  while (std::chrono::steady_clock::now() < end) TscClock::now();
}

// Without the counter (MUON_TSC=0, or a CPU without an invariant one) there
// are no windows: every reading goes to the clock, and agrees with it.
void expectNoWindows() {
  TscClock::SecondWindow window;
  int64_t before = Timestamp::now().microSecondsSinceEpoch();
  int64_t t = TscClock::nowAndWindow(&window).microSecondsSinceEpoch();
  int64_t after = Timestamp::now().microSecondsSinceEpoch();
  EXPECT_EQ(window.spanCounts, 0u);
  EXPECT_FALSE(window.covers(TscClock::readCounter()));
  EXPECT_GE(t, before);
  EXPECT_LE(t, after);
}

// A window's readings must agree with the wall clock as now() does, and
// never name a microsecond outside their second. Run across a second
// boundary (a window that outlived its second would read 1000000 or more
// there) and several calibrations, renewing the window whenever it stops
// covering the counter.
TEST(TscClockWindowTest, ReadingsAgreeWithTheWallClock) {
  pastWarmup();
  if (!TscClock::counterAvailable()) {
    expectNoWindows();
    return;
  }
  ASSERT_TRUE(TscClock::usingTsc());
  constexpr int64_t kToleranceUs = 50;
  // Start 100 ms before a second ends, so the run crosses it.
  while (Timestamp::now().microSecondsSinceEpoch() % 1000000 < 900000) {
  }
  auto end = std::chrono::steady_clock::now() +
             std::chrono::milliseconds(3 * TscClock::kResyncIntervalMs);
  TscClock::SecondWindow window;
  int64_t worst = 0;
  long covered = 0, renewed = 0;
  while (std::chrono::steady_clock::now() < end) {
    int64_t before = Timestamp::now().microSecondsSinceEpoch();
    uint64_t count = TscClock::readCounter();
    int64_t t;
    if (window.covers(count)) {
      int micro = window.microAt(count);
      ASSERT_GE(micro, 0);
      ASSERT_LT(micro, 1000000);
      t = window.second * 1000000 + micro;
      ++covered;
    } else {
      t = TscClock::nowAndWindow(&window).microSecondsSinceEpoch();
      ++renewed;
    }
    int64_t after = Timestamp::now().microSecondsSinceEpoch();
    int64_t error = t < before ? before - t : (t > after ? t - after : 0);
    if (error > worst) worst = error;
  }
  EXPECT_GT(covered, 1000);
  EXPECT_GE(renewed, 3);  // at least the second boundary and two calibrations
  EXPECT_LE(worst, kToleranceUs);
}

// When any thread publishes a new calibration, older windows cover nothing.
TEST(TscClockWindowTest, ANewCalibrationEndsEveryWindow) {
  pastWarmup();
  if (!TscClock::counterAvailable()) {
    expectNoWindows();
    return;
  }
  ASSERT_TRUE(TscClock::usingTsc());
  TscClock::SecondWindow window;
  while (window.spanCounts == 0) TscClock::nowAndWindow(&window);
  ASSERT_TRUE(window.covers(window.beginCount));
  // now() makes the next calibration once it is due (kResyncIntervalMs at most).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (muon::detail::g_tscCalibration.load() == window.calibration &&
         std::chrono::steady_clock::now() < deadline) {
    TscClock::now();
  }
  ASSERT_NE(muon::detail::g_tscCalibration.load(), window.calibration);
  EXPECT_FALSE(window.covers(window.beginCount));
}

}  // namespace
