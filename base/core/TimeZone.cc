#include "muon/base/TimeZone.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace muon {

namespace {

// The POSIX TZ string of a TZif footer ("EST5EDT,M3.2.0,M11.1.0"): the rule
// for instants after the last transition in the table. Fat TZif files stop
// their table in 2037 and slim ones much earlier, so without it every date past
// the table would keep the last offset forever (New York in July 2040 on EST).
struct PosixRule {
  enum Kind { kJulianNoLeap, kJulianWithLeap, kMonthWeekDay };
  Kind kind = kMonthWeekDay;
  int day = 0;      // Jn: 1..365; n: 0..365; Mm.w.d: weekday 0 (Sunday)..6
  int month = 1;    // Mm.w.d only
  int week = 1;     // Mm.w.d only: 1..5, 5 = the last one in the month
  int time = 7200;  // seconds after local midnight; -167h..167h (RFC 8536 3.3.1)
};

struct PosixTz {
  int stdOffset = 0;  // seconds east of UTC
  bool hasDst = false;
  int dstOffset = 0;
  PosixRule start;  // std -> dst, in local standard time
  PosixRule end;    // dst -> std, in local daylight time
};

int footerOffset(const PosixTz& tz, int64_t t);

}  // namespace

struct TimeZone::Data {
  struct Transition {
    int64_t utcTime;  // the instant the offset changes
    int offset;       // seconds east of UTC from then on
  };
  std::string name;
  bool utc = true;
  int initialOffset = 0;               // before the first transition
  std::vector<Transition> transitions; // sorted by utcTime
  bool hasFooter = false;              // footer rules apply after the last transition
  PosixTz footer;

  int offsetAt(int64_t t) const {
    if (hasFooter && (transitions.empty() || t > transitions.back().utcTime))
      return footerOffset(footer, t);
    auto it = std::upper_bound(transitions.begin(), transitions.end(), t,
                               [](int64_t x, const Transition& tr) { return x < tr.utcTime; });
    return it == transitions.begin() ? initialOffset : std::prev(it)->offset;
  }
};

namespace {

// Days since 1970-01-01 to a civil date and back (proleptic Gregorian;
// the algorithms of H. Hinnant's "chrono-Compatible Low-Level Date Algorithms").
void civilFromDays(int64_t z, int* year, int* month, int* day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  *year = static_cast<int>(yoe + era * 400 + (m <= 2));
  *month = static_cast<int>(m);
  *day = static_cast<int>(d);
}

int64_t daysFromCivil(int y, int m, int d) {
  int64_t yy = y - (m <= 2);
  const int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
  const int64_t yoe = yy - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool isLeapYear(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

// The day (since 1970-01-01) a footer rule names in `year`.
int64_t ruleDay(const PosixRule& r, int year) {
  const int64_t jan1 = daysFromCivil(year, 1, 1);
  switch (r.kind) {
    case PosixRule::kJulianNoLeap:  // Feb 29 is never counted: J60 is always Mar 1
      return jan1 + r.day - 1 + (isLeapYear(year) && r.day >= 60 ? 1 : 0);
    case PosixRule::kJulianWithLeap:
      return jan1 + r.day;
    case PosixRule::kMonthWeekDay:
      break;
  }
  const int64_t first = daysFromCivil(year, r.month, 1);
  const int64_t next = r.month == 12 ? daysFromCivil(year + 1, 1, 1)
                                     : daysFromCivil(year, r.month + 1, 1);
  const int64_t firstWeekday = (first % 7 + 7 + 4) % 7;  // 1970-01-01 was a Thursday
  int64_t day = first + (r.day - firstWeekday + 7) % 7 + (r.week - 1) * 7;
  while (day >= next) day -= 7;  // week 5: the last such weekday
  return day;
}

// The instant a rule fires in `year`, given the offset in force before it.
int64_t ruleInstant(const PosixRule& r, int year, int offsetBefore) {
  return ruleDay(r, year) * 86400 + r.time - offsetBefore;
}

int footerOffset(const PosixTz& tz, int64_t t) {
  if (!tz.hasDst) return tz.stdOffset;
  // The latest rule instant at or before t. Rule times may reach 167 hours
  // past a local midnight, so a year's transitions can fall in the next year:
  // look at the years around t. At equal instants the start wins, so DST all
  // year ("0/0,J365/25") stays on across New Year.
  int year;
  int month;
  int day;
  civilFromDays(floorDiv(t, 86400), &year, &month, &day);
  int64_t best = INT64_MIN;
  bool bestIsStart = false;
  int offset = tz.stdOffset;
  for (int y = year - 1; y <= year + 1; ++y) {
    const int64_t start = ruleInstant(tz.start, y, tz.stdOffset);
    const int64_t end = ruleInstant(tz.end, y, tz.dstOffset);
    if (end <= t && (end > best || (end == best && !bestIsStart))) {
      best = end;
      bestIsStart = false;
      offset = tz.stdOffset;
    }
    if (start <= t && start >= best) {
      best = start;
      bestIsStart = true;
      offset = tz.dstOffset;
    }
  }
  return offset;
}

// Parses the POSIX TZ string of a TZif footer (RFC 8536 3.3), e.g.
// "EST5EDT,M3.2.0,M11.1.0", "<+0330>-3:30", "AEST-10AEDT,M10.1.0,M4.1.0/3".
class PosixTzParser {
 public:
  explicit PosixTzParser(std::string_view s) : s_(s) {}

  bool parse(PosixTz* tz) {
    int west = 0;
    if (!name() || !hms(24, &west)) return false;
    tz->stdOffset = -west;
    if (done()) return true;
    if (!name()) return false;
    tz->hasDst = true;
    tz->dstOffset = tz->stdOffset + 3600;
    if (peekIsOffsetStart()) {
      if (!hms(24, &west)) return false;
      tz->dstOffset = -west;
    }
    // POSIX leaves a DST zone without rules to the implementation; zic
    // always writes them, so their absence means a damaged file.
    return eat(',') && rule(&tz->start) && eat(',') && rule(&tz->end) && done();
  }

 private:
  bool done() const { return i_ == s_.size(); }
  bool eat(char c) {
    if (done() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  bool peekIsDigit() const { return !done() && s_[i_] >= '0' && s_[i_] <= '9'; }
  bool peekIsOffsetStart() const {
    return peekIsDigit() || (!done() && (s_[i_] == '+' || s_[i_] == '-'));
  }

  // An abbreviation: three or more letters, or <...> holding letters, digits, + and -.
  bool name() {
    size_t n = 0;
    if (eat('<')) {
      while (!done() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '+' ||
                         s_[i_] == '-')) {
        ++i_;
        ++n;
      }
      return n >= 3 && eat('>');
    }
    while (!done() && std::isalpha(static_cast<unsigned char>(s_[i_]))) {
      ++i_;
      ++n;
    }
    return n >= 3;
  }

  bool number(int max, int* value) {
    if (!peekIsDigit()) return false;
    int v = 0;
    while (peekIsDigit()) {
      v = v * 10 + (s_[i_++] - '0');
      if (v > max) return false;
    }
    *value = v;
    return true;
  }

  // [+-]hh[:mm[:ss]] in seconds.
  bool hms(int maxHours, int* seconds) {
    int sign = 1;
    if (eat('-')) {
      sign = -1;
    } else {
      eat('+');
    }
    int h = 0;
    int m = 0;
    int sec = 0;
    if (!number(maxHours, &h)) return false;
    if (eat(':')) {
      if (!number(59, &m)) return false;
      if (eat(':') && !number(59, &sec)) return false;
    }
    *seconds = sign * (h * 3600 + m * 60 + sec);
    return true;
  }

  bool rule(PosixRule* r) {
    if (eat('J')) {
      r->kind = PosixRule::kJulianNoLeap;
      if (!number(365, &r->day) || r->day < 1) return false;
    } else if (eat('M')) {
      r->kind = PosixRule::kMonthWeekDay;
      if (!number(12, &r->month) || r->month < 1 || !eat('.') || !number(5, &r->week) ||
          r->week < 1 || !eat('.') || !number(6, &r->day))
        return false;
    } else {
      r->kind = PosixRule::kJulianWithLeap;
      if (!number(365, &r->day)) return false;
    }
    r->time = 7200;
    if (eat('/') && !hms(167, &r->time)) return false;
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// Reads a big-endian signed integer of `bytes` bytes.
int64_t readBigEndian(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw std::runtime_error("muon::TimeZone: cannot load '" + path + "': " + why);
}

// Parses a TZif file (RFC 8536), versions 1 to 4. For version 2+ the 64-bit
// second part is used, so dates after 2038 are right.
std::shared_ptr<TimeZone::Data> parseTzif(const std::string& path, const std::string& bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t size = bytes.size();
  constexpr size_t kHeader = 44;
  if (size < kHeader || std::memcmp(p, "TZif", 4) != 0) fail(path, "not a TZif file");

  struct Counts {
    int64_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
  };
  auto readCounts = [&](size_t at) {
    const unsigned char* h = p + at + 20;
    return Counts{readBigEndian(h, 4),      readBigEndian(h + 4, 4),  readBigEndian(h + 8, 4),
                  readBigEndian(h + 12, 4), readBigEndian(h + 16, 4), readBigEndian(h + 20, 4)};
  };
  auto blockSize = [](const Counts& c, int timeBytes) {
    return static_cast<size_t>(c.timecnt * timeBytes + c.timecnt + c.typecnt * 6 + c.charcnt +
                               c.leapcnt * (timeBytes + 4) + c.isstdcnt + c.isutcnt);
  };

  // Every count is checked in both headers before any of them is used:
  // a negative count would make blockSize() wrap and let the reads below run
  // past the end of the file.
  auto checkCounts = [&](const Counts& c) {
    if (c.isutcnt < 0 || c.isstdcnt < 0 || c.leapcnt < 0 || c.timecnt < 0 || c.typecnt <= 0 ||
        c.typecnt > 256 || c.charcnt < 0)
      fail(path, "corrupt header");
  };

  Counts c = readCounts(0);
  checkCounts(c);
  size_t at = kHeader;
  int timeBytes = 4;
  if (p[4] >= '2') {
    // Skip the 32-bit block; the 64-bit header and block follow it.
    at += blockSize(c, 4);
    if (size < at + kHeader || std::memcmp(p + at, "TZif", 4) != 0) fail(path, "corrupt v2 header");
    c = readCounts(at);
    checkCounts(c);
    at += kHeader;
    timeBytes = 8;
  }
  if (size < at + blockSize(c, timeBytes)) fail(path, "truncated file");

  const unsigned char* times = p + at;
  const unsigned char* indices = times + c.timecnt * timeBytes;
  const unsigned char* types = indices + c.timecnt;

  auto typeOffset = [&](int64_t i) {
    int64_t offset = readBigEndian(types + i * 6, 4);
    // RFC 8536 bounds utoff to (-25h, 26h); beyond that the file is damaged,
    // and the arithmetic in toLocalTime() is kept far from overflow.
    if (offset <= -25 * 3600 || offset >= 26 * 3600) fail(path, "UTC offset out of range");
    return static_cast<int>(offset);
  };

  auto data = std::make_shared<TimeZone::Data>();
  data->utc = false;
  // Before the first transition: time type 0 (RFC 8536 3.2).
  data->initialOffset = typeOffset(0);
  data->transitions.reserve(static_cast<size_t>(c.timecnt));
  for (int64_t i = 0; i < c.timecnt; ++i) {
    int64_t t = readBigEndian(times + i * timeBytes, timeBytes);
    int idx = indices[i];
    if (idx >= c.typecnt) fail(path, "transition names a missing type");
    if (!data->transitions.empty() && t <= data->transitions.back().utcTime)
      fail(path, "transitions out of order");
    data->transitions.push_back({t, typeOffset(idx)});
  }

  // Version 2+: after the 64-bit block, "\n<POSIX TZ string>\n" covers the
  // instants past the last transition. An empty string means no rule.
  if (timeBytes == 8) {
    size_t footer = at + blockSize(c, timeBytes);
    if (footer < size) {
      size_t close = bytes.find('\n', footer + 1);
      if (p[footer] != '\n' || close == std::string::npos) fail(path, "corrupt footer");
      std::string_view tz(bytes.data() + footer + 1, close - footer - 1);
      if (!tz.empty()) {
        if (!PosixTzParser(tz).parse(&data->footer))
          fail(path, "bad TZ string '" + std::string(tz) + "' in footer");
        data->hasFooter = true;
      }
    }
  }
  // A zone that is UTC all the time ("UTC", "Etc/UTC", "Zulu") is UTC, and
  // its lines get the 'Z' as the default zone's do.
  data->utc = data->transitions.empty() && data->initialOffset == 0 &&
              (!data->hasFooter || (data->footer.stdOffset == 0 && !data->footer.hasDst));
  return data;
}

}  // namespace

TimeZone::TimeZone() {
  static const auto kUtc = [] {
    auto d = std::make_shared<Data>();
    d->name = "UTC";
    return std::shared_ptr<const Data>(d);
  }();
  data_ = kUtc;
}

TimeZone::TimeZone(std::shared_ptr<const Data> data) : data_(std::move(data)) {}

TimeZone TimeZone::fixed(int secondsEastOfUtc, std::string name) {
  if (secondsEastOfUtc <= -24 * 3600 || secondsEastOfUtc >= 24 * 3600)
    throw std::invalid_argument("muon::TimeZone::fixed: offset out of range");
  auto d = std::make_shared<Data>();
  d->name = std::move(name);
  d->utc = false;
  d->initialOffset = secondsEastOfUtc;
  return TimeZone(d);
}

namespace {
std::shared_ptr<TimeZone::Data> readTzif(const std::string& path, std::string name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail(path, "read error");
  auto data = parseTzif(path, bytes);
  data->name = std::move(name);
  return data;
}
}  // namespace

TimeZone TimeZone::loadFile(const std::string& path) { return TimeZone(readTzif(path, path)); }

TimeZone TimeZone::load(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find("..") != std::string_view::npos)
    throw std::invalid_argument("muon::TimeZone::load: bad zone name '" + std::string(name) + "'");
  const char* dir = std::getenv("TZDIR");
  std::string path = std::string(dir && *dir ? dir : "/usr/share/zoneinfo") + "/" + std::string(name);
  return TimeZone(readTzif(path, std::string(name)));
}

bool TimeZone::isUtc() const { return data_->utc; }

const std::string& TimeZone::name() const { return data_->name; }

DateTime TimeZone::toLocalTime(int64_t secondsSinceEpoch) const {
  if (data_->utc) return toUtcTime(secondsSinceEpoch);
  int offset = data_->offsetAt(secondsSinceEpoch);
  DateTime dt = toUtcTime(secondsSinceEpoch + offset);
  dt.utcOffset = offset;
  return dt;
}

DateTime TimeZone::toUtcTime(int64_t secondsSinceEpoch) {
  DateTime dt;
  int64_t days = floorDiv(secondsSinceEpoch, 86400);
  int64_t secondsOfDay = secondsSinceEpoch - days * 86400;
  civilFromDays(days, &dt.year, &dt.month, &dt.day);
  dt.hour = static_cast<int>(secondsOfDay / 3600);
  dt.minute = static_cast<int>(secondsOfDay / 60 % 60);
  dt.second = static_cast<int>(secondsOfDay % 60);
  dt.utcOffset = 0;
  return dt;
}

int64_t TimeZone::fromUtcTime(const DateTime& dt) {
  return daysFromCivil(dt.year, dt.month, dt.day) * 86400 + dt.hour * 3600 + dt.minute * 60 +
         dt.second;
}

}  // namespace muon
