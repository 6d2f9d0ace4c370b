#include "TickClock.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace logbench {

namespace {

// The TSC is usable as a clock only if it ticks at one rate whatever the
// core's frequency (constant_tsc) and keeps ticking in deep idle (nonstop_tsc).
bool hasInvariantTsc() {
#if defined(__x86_64__)
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 5, "flags") != 0) continue;
    std::istringstream words(line);
    std::string word;
    bool constant = false;
    bool nonstop = false;
    while (words >> word) {
      if (word == "constant_tsc") constant = true;
      if (word == "nonstop_tsc") nonstop = true;
    }
    return constant && nonstop;
  }
#endif
  return false;
}

}  // namespace

TickClock::TickClock() : useTsc_(hasInvariantTsc()) {
  if (useTsc_) {
    // 100 ms against steady_clock puts the rate within ~0.01%, far below the
    // spread between runs.
    auto wall0 = std::chrono::steady_clock::now();
    uint64_t tick0 = now();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto wall1 = std::chrono::steady_clock::now();
    uint64_t tick1 = now();
    double ns = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(wall1 - wall0).count());
    nsPerTick_ = ns / static_cast<double>(tick1 - tick0);
  }

  constexpr size_t kPairs = 100000;
  std::vector<uint64_t> gaps(kPairs);
  for (uint64_t& gap : gaps) {
    uint64_t t0 = now();
    gap = now() - t0;
  }
  std::nth_element(gaps.begin(), gaps.begin() + kPairs / 2, gaps.end());
  overheadNs_ = static_cast<double>(gaps[kPairs / 2]) * nsPerTick_;
}

const TickClock& TickClock::instance() {
  static const TickClock clock;
  return clock;
}

}  // namespace logbench
