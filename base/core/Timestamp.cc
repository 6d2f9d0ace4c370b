#include "muon/base/Timestamp.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

namespace muon {

Timestamp Timestamp::now() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return Timestamp(static_cast<int64_t>(ts.tv_sec) * kMicroSecondsPerSecond + ts.tv_nsec / 1000);
}

std::string Timestamp::toString() const {
  // Not secondsSinceEpoch(): its floor division would print -1 us as
  // "-1.999999". The magnitude is taken in unsigned arithmetic, exact for INT64_MIN.
  const bool negative = microSecondsSinceEpoch_ < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(microSecondsSinceEpoch_)
                                      : static_cast<uint64_t>(microSecondsSinceEpoch_);
  const uint64_t perSecond = static_cast<uint64_t>(kMicroSecondsPerSecond);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%06" PRIu64, negative ? "-" : "",
                magnitude / perSecond, magnitude % perSecond);
  return buf;
}

std::string Timestamp::toFormattedString(bool showMicroseconds) const {
  time_t seconds = static_cast<time_t>(secondsSinceEpoch());
  struct tm tm;
  ::gmtime_r(&seconds, &tm);
  char buf[64];
  if (showMicroseconds) {
    std::snprintf(buf, sizeof buf, "%04d%02d%02d %02d:%02d:%02d.%06d", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  microSecondsInSecond());
  } else {
    std::snprintf(buf, sizeof buf, "%04d%02d%02d %02d:%02d:%02d", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}

}  // namespace muon
