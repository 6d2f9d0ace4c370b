// A clock that tests set by hand, for LogFile::setClock and
// LogFile::Options::clock (both take a plain function). One per test
// process; a test sets it before handing it over. For tests only.
#pragma once

#include <atomic>
#include <cstdint>

#include "muon/base/Timestamp.h"

namespace muon {
namespace test {

inline std::atomic<int64_t> g_fakeClockMicros{0};

inline Timestamp fakeClock() { return Timestamp(g_fakeClockMicros.load()); }

// Sets the fake clock to `seconds` since the epoch.
inline void setFakeTime(int64_t seconds) {
  g_fakeClockMicros.store(seconds * Timestamp::kMicroSecondsPerSecond);
}

}  // namespace test
}  // namespace muon
