#include "muon/base/internal/LineLayout.h"

#include <cstring>

#include "muon/base/LogRecord.h"
#include "muon/base/TimeZone.h"
#include "muon/base/Timestamp.h"

namespace muon {
namespace detail {

size_t writeDateTimeToSecond(char* p, const DateTime& dt, bool iso) {
  char* const start = p;
  // Years 0..9999 print as 4 digits; anything else is out of a log's range.
  const int year = dt.year < 0 ? 0 : (dt.year > 9999 ? 9999 : dt.year);
  auto write2 = [&p](int v) {
    writeTwoDigits(p, static_cast<unsigned>(v));
    p += 2;
  };
  write2(year / 100);
  write2(year % 100);
  if (iso) *p++ = '-';
  write2(dt.month);
  if (iso) *p++ = '-';
  write2(dt.day);
  *p++ = iso ? 'T' : ' ';
  write2(dt.hour);
  *p++ = ':';
  write2(dt.minute);
  *p++ = ':';
  write2(dt.second);
  *p++ = '.';
  return static_cast<size_t>(p - start);
}

size_t writePrefix(char* p, const DateTime& dt, bool utc, std::string_view tid) {
  char* const start = p;
  p += writeDateTimeToSecond(p, dt, false);
  p += 6;  // the microsecond digits are written per line
  if (utc) *p++ = 'Z';
  *p++ = ' ';
  std::memcpy(p, tid.data(), tid.size());
  p += tid.size();
  return static_cast<size_t>(p - start);
}

namespace {

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

// " %5d LEVEL  " from line[i], where the date-time ends: spaces, the thread
// id's digits (at most 9), a space, and a level name padded to
// kLevelNameLength. False if they are not there; else *tid, *level and
// *messageFrom (where what follows the level begins).
bool readThreadAndLevel(std::string_view line, size_t i, int* tid, int* level, size_t* messageFrom) {
  if (i >= line.size() || line[i] != ' ') return false;
  while (i < line.size() && line[i] == ' ') ++i;
  int value = 0;
  const size_t digits = i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9' && i - digits < 9) {
    value = value * 10 + (line[i] - '0');
    ++i;
  }
  if (i == digits || i >= line.size() || line[i] != ' ') return false;
  const std::string_view rest = line.substr(i + 1);
  for (int l = 0; l < kLevelCount; ++l) {
    if (rest.size() >= kLevelNameLength &&
        rest.compare(0, kLevelNameLength, kLevelNames[l], kLevelNameLength) == 0) {
      *tid = value;
      *level = l;
      *messageFrom = i + 1 + kLevelNameLength;
      return true;
    }
  }
  return false;
}

}  // namespace

size_t readDateTime(std::string_view line, const TimeZone& zone, Timestamp* time) {
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

bool parseLine(std::string_view line, const TimeZone& zone, LogRecord* record) {
  *record = LogRecord();
  record->text = line;
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  const size_t dateTime = readDateTime(line, zone, &record->time);
  if (dateTime == 0) return false;
  int tid = 0;
  int found = -1;
  size_t messageFrom = 0;
  if (!readThreadAndLevel(line, dateTime, &tid, &found, &messageFrom)) return false;
  record->tid = tid;
  record->level = static_cast<Logger::LogLevel>(found);
  std::string_view message = line.substr(messageFrom);
  // The trailer: " - name:digits" at the end.
  const size_t dash = message.rfind(" - ");
  if (dash != std::string_view::npos) {
    const std::string_view where = message.substr(dash + 3);
    const size_t colon = where.rfind(':');
    int number = 0;
    if (colon != std::string_view::npos && colon > 0 && colon + 1 < where.size() &&
        where.size() - colon - 1 <= 9 &&
        digitsAt(where, colon + 1, where.size() - colon - 1, &number) &&
        where.substr(0, colon).find(' ') == std::string_view::npos) {
      record->file = where.substr(0, colon);
      record->line = number;
      message = message.substr(0, dash);
    }
  }
  if (found <= 1) {  // TRACE, DEBUG: "func message"
    const size_t space = message.find(' ');
    record->function = message.substr(0, space);
    message = space == std::string_view::npos ? std::string_view() : message.substr(space + 1);
  }
  record->message = message;
  return true;
}

int levelOfLine(std::string_view line) {
  // "YYYYmmdd HH:MM:SS.uuuuuu" and an optional 'Z', not read as a time.
  constexpr size_t kDateTime = 24;
  if (line.size() <= kDateTime || line[8] != ' ' || line[17] != '.') return -1;
  int tid = 0;
  int level = -1;
  size_t messageFrom = 0;
  const size_t dateTime = line[kDateTime] == 'Z' ? kDateTime + 1 : kDateTime;
  return readThreadAndLevel(line, dateTime, &tid, &level, &messageFrom) ? level : -1;
}

bool appendTrailerBytes(LogStream& stream, const char* trailer, size_t n) {
  return stream.finishLine(trailer, n);
}

void appendFromLevel(std::string* out, const LogRecord& record) {
  out->append(kLevelNames[record.level], kLevelNameLength);
  if (!record.function.empty()) {
    out->append(record.function);
    *out += ' ';
  }
  out->append(record.message);
  if (!record.file.empty()) {
    const SourceLocation where = makeTrailer(record.file.data(), record.file.size(), record.line);
    out->append(where.trailer, where.length - 1);  // without the '\n'
  }
}

std::string dropReport(Timestamp now, uint64_t buffers, uint64_t messages, std::string_view note) {
  std::string text = "Dropped log messages at " + now.toFormattedString() + ", " +
                     std::to_string(buffers) + " larger buffers (" + std::to_string(messages) +
                     " messages)";
  if (!note.empty()) {
    text += "; ";
    text.append(note);
  }
  text += '\n';
  return text;
}

}  // namespace detail
}  // namespace muon
