// TimeZone: turns UTC seconds into a local calendar date and time.
//
// UTC by default; a fixed offset; or a zone from the system tz database
// (TZif files under /usr/share/zoneinfo, or $TZDIR), so that a server can log
// in Asia/Shanghai time and be right across daylight-saving changes. Past the
// end of a file's transition table (2037 in "fat" files) the rule of its
// footer (a POSIX TZ string such as "EST5EDT,M3.2.0,M11.1.0") applies.
// Leap-second files (the "right/" zones) are read as if they had none.
// Immutable once built: copies share the data, and any thread may use one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace muon {

struct DateTime {
  int year = 1970;   // e.g. 2026
  int month = 1;     // 1..12
  int day = 1;       // 1..31
  int hour = 0;      // 0..23
  int minute = 0;    // 0..59
  int second = 0;    // 0..59 (tz leap seconds are not modelled)
  int utcOffset = 0; // seconds east of UTC in force at that instant
};

class TimeZone {
 public:
  // UTC.
  TimeZone();
  // A zone that is always `secondsEastOfUtc` ahead of UTC, named `name`.
  static TimeZone fixed(int secondsEastOfUtc, std::string name);
  // A zone from the tz database by name ("Asia/Shanghai", "UTC"), looked up
  // under $TZDIR or /usr/share/zoneinfo. Throws std::runtime_error naming the
  // file and the reason when it cannot be read or is not a TZif file.
  static TimeZone load(std::string_view name);
  // The same, from a TZif file's path.
  static TimeZone loadFile(const std::string& path);

  bool isUtc() const;
  const std::string& name() const;

  DateTime toLocalTime(int64_t secondsSinceEpoch) const;
  // Calendar arithmetic in UTC, with no table look-up.
  static DateTime toUtcTime(int64_t secondsSinceEpoch);
  static int64_t fromUtcTime(const DateTime& dt);

  struct Data;

 private:
  explicit TimeZone(std::shared_ptr<const Data> data);
  std::shared_ptr<const Data> data_;
};

}  // namespace muon
