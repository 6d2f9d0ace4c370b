// Timestamp: a point in UTC time, in microseconds since the Unix epoch.
// A value type: cheap to copy, safe to use from any thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace muon {

class Timestamp {
 public:
  static constexpr int64_t kMicroSecondsPerSecond = 1000 * 1000;

  constexpr Timestamp() : microSecondsSinceEpoch_(0) {}
  explicit constexpr Timestamp(int64_t microSecondsSinceEpoch)
      : microSecondsSinceEpoch_(microSecondsSinceEpoch) {}

  // The wall clock (CLOCK_REALTIME). For measuring intervals use
  // std::chrono::steady_clock instead: the wall clock can jump.
  static Timestamp now();
  static constexpr Timestamp invalid() { return Timestamp(); }
  static constexpr Timestamp fromUnixTime(int64_t seconds, int64_t microseconds = 0) {
    return Timestamp(seconds * kMicroSecondsPerSecond + microseconds);
  }

  bool valid() const { return microSecondsSinceEpoch_ > 0; }
  int64_t microSecondsSinceEpoch() const { return microSecondsSinceEpoch_; }
  // Floor division, so times before 1970 still split into second + [0, 1e6) us.
  int64_t secondsSinceEpoch() const {
    int64_t s = microSecondsSinceEpoch_ / kMicroSecondsPerSecond;
    return (microSecondsSinceEpoch_ % kMicroSecondsPerSecond < 0) ? s - 1 : s;
  }
  // In [0, 1e6). Not us - seconds * 1e6: within a second of INT64_MIN that
  // product overflows.
  int microSecondsInSecond() const {
    int64_t r = microSecondsSinceEpoch_ % kMicroSecondsPerSecond;
    return static_cast<int>(r < 0 ? r + kMicroSecondsPerSecond : r);
  }

  // "seconds.micros", e.g. "1763712902.123456"; before 1970 the sign leads
  // and both parts are magnitudes: -0.5 s is "-0.500000".
  std::string toString() const;
  // "20261121 08:15:02.123456" in UTC.
  std::string toFormattedString(bool showMicroseconds = true) const;

  friend bool operator<(Timestamp a, Timestamp b) { return a.microSecondsSinceEpoch_ < b.microSecondsSinceEpoch_; }
  friend bool operator>(Timestamp a, Timestamp b) { return b < a; }
  friend bool operator<=(Timestamp a, Timestamp b) { return !(b < a); }
  friend bool operator>=(Timestamp a, Timestamp b) { return !(a < b); }
  friend bool operator==(Timestamp a, Timestamp b) { return a.microSecondsSinceEpoch_ == b.microSecondsSinceEpoch_; }
  friend bool operator!=(Timestamp a, Timestamp b) { return !(a == b); }

 private:
  int64_t microSecondsSinceEpoch_;
};

// Seconds from low to high (negative if high is earlier).
inline double timeDifference(Timestamp high, Timestamp low) {
  return static_cast<double>(high.microSecondsSinceEpoch() - low.microSecondsSinceEpoch()) /
         Timestamp::kMicroSecondsPerSecond;
}

// Rounds to the nearest microsecond: 2.097148 * 1e6 is 2097147.99999..., and
// truncating it would add a microsecond too little.
inline Timestamp addTime(Timestamp t, double seconds) {
  return Timestamp(t.microSecondsSinceEpoch() +
                   static_cast<int64_t>(std::llround(seconds * Timestamp::kMicroSecondsPerSecond)));
}

}  // namespace muon
