#include "muon/base/TimeZone.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace muon {

struct TimeZone::Data {
  struct Transition {
    int64_t utcTime;  // the instant the offset changes
    int offset;       // seconds east of UTC from then on
  };
  std::string name;
  bool utc = true;
  int initialOffset = 0;               // before the first transition
  std::vector<Transition> transitions; // sorted by utcTime

  int offsetAt(int64_t t) const {
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

  Counts c = readCounts(0);
  if (c.timecnt < 0 || c.typecnt <= 0 || c.charcnt < 0 || c.leapcnt < 0 || c.isstdcnt < 0 ||
      c.isutcnt < 0)
    fail(path, "corrupt header");
  size_t at = kHeader;
  int timeBytes = 4;
  if (p[4] >= '2') {
    // Skip the 32-bit block; the 64-bit header and block follow it.
    at += blockSize(c, 4);
    if (size < at + kHeader || std::memcmp(p + at, "TZif", 4) != 0) fail(path, "corrupt v2 header");
    c = readCounts(at);
    at += kHeader;
    timeBytes = 8;
  }
  if (c.timecnt < 0 || c.typecnt <= 0 || size < at + blockSize(c, timeBytes))
    fail(path, "truncated file");

  const unsigned char* times = p + at;
  const unsigned char* indices = times + c.timecnt * timeBytes;
  const unsigned char* types = indices + c.timecnt;

  auto typeOffset = [&](int64_t i) {
    return static_cast<int>(readBigEndian(types + i * 6, 4));
  };
  auto typeIsDst = [&](int64_t i) { return types[i * 6 + 4] != 0; };

  auto data = std::make_shared<TimeZone::Data>();
  data->utc = false;
  // Before the first transition: the first standard-time type (RFC 8536 3.2).
  int64_t initial = 0;
  for (int64_t i = 0; i < c.typecnt; ++i) {
    if (!typeIsDst(i)) {
      initial = i;
      break;
    }
  }
  data->initialOffset = typeOffset(initial);
  data->transitions.reserve(static_cast<size_t>(c.timecnt));
  for (int64_t i = 0; i < c.timecnt; ++i) {
    int64_t t = readBigEndian(times + i * timeBytes, timeBytes);
    int idx = indices[i];
    if (idx >= c.typecnt) fail(path, "transition names a missing type");
    if (!data->transitions.empty() && t <= data->transitions.back().utcTime)
      fail(path, "transitions out of order");
    data->transitions.push_back({t, typeOffset(idx)});
  }
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
