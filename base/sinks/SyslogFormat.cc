#include "muon/base/SyslogFormat.h"

#include <algorithm>
#include <cstdio>

#include "muon/base/LineLayout.h"

namespace muon {
namespace rfc5424 {

namespace {

std::string headerField(const std::string& value, size_t maxLength) {
  std::string field = value.substr(0, maxLength);
  for (char& c : field) {
    if (c <= ' ' || c > '~') c = '_';
  }
  return field.empty() ? "-" : field;
}

bool digitsAt(std::string_view s, size_t from, size_t n, int* value) {
  if (from + n > s.size()) return false;
  int v = 0;
  for (size_t i = from; i < from + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

// "YYYYmmdd HH:MM:SS.uuuuuu" with an optional 'Z', at the line's start: the
// instant, and the length read (0 if the line does not start so).
size_t parseDateTime(std::string_view line, const TimeZone& zone, Timestamp* time) {
  DateTime dt;
  int micro = 0;
  if (line.size() < 24 || line[8] != ' ' || line[11] != ':' || line[14] != ':' ||
      line[17] != '.' || !digitsAt(line, 0, 4, &dt.year) || !digitsAt(line, 4, 2, &dt.month) ||
      !digitsAt(line, 6, 2, &dt.day) || !digitsAt(line, 9, 2, &dt.hour) ||
      !digitsAt(line, 12, 2, &dt.minute) || !digitsAt(line, 15, 2, &dt.second) ||
      !digitsAt(line, 18, 6, &micro)) {
    return 0;
  }
  size_t length = 24;
  int64_t seconds = TimeZone::fromUtcTime(dt);
  if (line.size() > 24 && line[24] == 'Z') {
    ++length;
  } else {
    // Local time: take away the offset in force then (looked up twice, so
    // that an instant next to a change of offset lands on the right side).
    int64_t guess = seconds - zone.toLocalTime(seconds).utcOffset;
    seconds -= zone.toLocalTime(guess).utcOffset;
  }
  *time = Timestamp(seconds * Timestamp::kMicroSecondsPerSecond + micro);
  return length;
}

}  // namespace

int severityOf(Logger::LogLevel level) {
  switch (level) {
    case Logger::TRACE:
    case Logger::DEBUG:
      return kDebug;
    case Logger::INFO:
      return kInformational;
    case Logger::WARN:
      return kWarning;
    case Logger::ERROR:
      return kError;
    case Logger::FATAL:
      return kCritical;
    default:
      return kNotice;
  }
}

std::string utcTimestamp(Timestamp time) {
  const DateTime dt = TimeZone::toUtcTime(time.secondsSinceEpoch());
  const int year = std::clamp(dt.year, 0, 9999);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", year, dt.month, dt.day,
                dt.hour, dt.minute, dt.second, time.microSecondsInSecond());
  return buf;
}

std::string header(int facility, int severity, const std::string& timestamp,
                   const std::string& hostname, const std::string& appName, pid_t pid) {
  return "<" + std::to_string(facility * 8 + severity) + ">1 " + timestamp + ' ' +
         headerField(hostname, 255) + ' ' + headerField(appName, 48) + ' ' +
         std::to_string(pid) + " - - ";
}

std::string formatLine(std::string_view line, int facility, const std::string& hostname,
                       const std::string& appName, pid_t pid, const TimeZone& zone) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  Timestamp time;
  const size_t dateTime = parseDateTime(line, zone, &time);
  if (dateTime == 0) return header(facility, kNotice, "-", hostname, appName, pid) + std::string(line);
  std::string_view msg = line.substr(dateTime);
  while (!msg.empty() && msg.front() == ' ') msg.remove_prefix(1);  // the tid's padding
  // The level follows the thread id.
  int severity = kNotice;
  const size_t space = msg.find(' ');
  if (space != std::string_view::npos) {
    std::string_view rest = msg.substr(space + 1);
    for (int level = 0; level < detail::kLevelCount; ++level) {
      const std::string_view name = detail::levelName(level);
      if (rest.size() > name.size() && rest.compare(0, name.size(), name) == 0 &&
          rest[name.size()] == ' ') {
        severity = severityOf(static_cast<Logger::LogLevel>(level));
        break;
      }
    }
  }
  return header(facility, severity, utcTimestamp(time), hostname, appName, pid) + std::string(msg);
}

}  // namespace rfc5424
}  // namespace muon
