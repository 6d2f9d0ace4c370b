// LineLayout: the layout of muon's text line, and the level names, in one
// place. The line is muduo's:
//
//   20261121 08:15:02.123456Z  4321 INFO  message - file.cc:42
//   [prefix                         ][level ][message][trailer      ]
//
// The prefix is the date-time ('Z' only in UTC), a space and the thread id as
// "%5d "; the level name is padded to six; TRACE and DEBUG statements put
// their function's name and a space before the message; the trailer is
// " - ", the source file's basename, ':', the line and '\n'.
//
// Logger writes a line from these pieces on its fast path (the prefix once
// per second per thread, the trailer once per statement at compile time);
// formatters that give the same fields another shape (SyslogSink's MSG, the
// backtrace markers) take them from here, so that no other file knows the
// layout or spells a level name.
//
// This is an internal header, included by LogSite.h: include Logging.h.
// Everything here is a pure function of its arguments: any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "muon/base/LogStream.h"

namespace muon {

struct DateTime;
struct LogRecord;
class TimeZone;
class Timestamp;

namespace detail {

// ---- level names ---------------------------------------------------------

// Indexed by Logger::LogLevel. Padded to 8 bytes so that a line copies a
// fixed 8 (one move) and keeps kLevelNameLength.
inline constexpr int kLevelCount = 6;
inline constexpr char kLevelNames[kLevelCount][8] = {
    "TRACE  ", "DEBUG  ", "INFO   ", "WARN   ", "ERROR  ", "FATAL  ",
};
inline constexpr size_t kLevelNameLength = 6;

// The bare name, "INFO" (0 <= level < kLevelCount).
constexpr std::string_view levelName(int level) {
  const char* name = kLevelNames[level];
  size_t n = 0;
  while (name[n] != ' ' && name[n] != '\0') ++n;
  return std::string_view(name, n);
}

// The syslog severity (RFC 5424, sd-daemon's <N>) of a level: TRACE and
// DEBUG debug (7), INFO info (6), WARN warning (4), ERROR err (3), FATAL
// crit (2); notice (5) for anything else. The one place a level becomes one.
constexpr int syslogSeverity(int level) {
  constexpr int kSeverities[kLevelCount] = {7, 7, 6, 4, 3, 2};
  return level >= 0 && level < kLevelCount ? kSeverities[level] : 5;
}

// ---- the prefix ------------------------------------------------------------

// "20261121 08:15:02.123456Z  4321 " at most: date-time, microseconds, 'Z',
// space and a tid up to 10 digits. Logger copies this many bytes as a block.
inline constexpr size_t kPrefixCapacity = 48;
// Where the six microsecond digits go: "20261121 08:15:02." is 18 chars.
inline constexpr size_t kMicroOffset = 18;
static_assert(kPrefixCapacity + sizeof kLevelNames[0] < LogStream::kBufferSize, "");

// Writes the prefix of a line in the second `dt` into p (kPrefixCapacity
// bytes), its microsecond digits left for writeMicro; returns its length.
// `tid` is CurrentThread::tidString(), "%5d ".
size_t writePrefix(char* p, const DateTime& dt, bool utc, std::string_view tid);
// Writes `dt` to the second and a '.' at p, "20261121 08:15:02." as a line's
// prefix has it, or with `iso` "2026-11-21T08:15:02." (RFC 3339); returns
// the length (18 or 20).
size_t writeDateTimeToSecond(char* p, const DateTime& dt, bool iso);

// Writes 0 <= micro < 10^6 as six digits at p.
inline void writeMicro(char* p, int micro) {
  const auto m = static_cast<unsigned>(micro);
  writeTwoDigits(p, m / 10000);
  writeTwoDigits(p + 2, m / 100 % 100);
  writeTwoDigits(p + 4, m % 100);
}

// A prefix made once per second (and per zone change) for one thread's
// lines, which then copy it and write only their microsecond: each thread
// keeps one for the lines it formats, AsyncLogging's backend one per thread
// whose records it formats. A plain value; its owner's thread only.
struct LinePrefix {
  int64_t second = INT64_MIN;
  unsigned generation = ~0u;  // the time zone's (timeZoneGeneration())
  size_t length = 0;
  uint64_t builds = 0;
  char text[kPrefixCapacity] = {};

  // Makes it the prefix of `second` for the thread `tid` ("%5d "), in the
  // zone Logger::timeZone() has now, unless it already is (Logging.cc).
  void update(int64_t sec, unsigned zoneGeneration, std::string_view tid) {
    if (sec != second || zoneGeneration != generation) rebuild(sec, zoneGeneration, tid);
  }
  void rebuild(int64_t sec, unsigned zoneGeneration, std::string_view tid);
};

// Changes whenever Logger::setTimeZone does (Logging.cc).
unsigned timeZoneGeneration();

// Starts a line in the empty `buf`: `prefix` with the microsecond `micro`
// written in, and the level's name. Returns the header's length.
inline size_t writeHeader(LogStream::Buffer& buf, const LinePrefix& prefix, int micro, int level) {
  // Fixed-size copies into the empty buffer; only `length` and
  // kLevelNameLength bytes of them count.
  char* p = buf.current();
  std::memcpy(p, prefix.text, kPrefixCapacity);
  writeMicro(p + kMicroOffset, micro);
  std::memcpy(p + prefix.length, kLevelNames[level], sizeof kLevelNames[level]);
  const size_t headerLength = prefix.length + kLevelNameLength;
  buf.add(headerLength);
  return headerLength;
}

// ---- the trailer -------------------------------------------------------------

// Offset of a path's basename: "a/b/c.cc" -> 4. constexpr, so the macros can
// compute it at compile time.
constexpr size_t basenameOffset(const char* path) {
  size_t offset = 0;
  for (size_t i = 0; path[i] != '\0'; ++i) {
    if (path[i] == '/') offset = i + 1;
  }
  return offset;
}

// What a line ends with, " - file.cc:42\n", built at compile time once per
// LOG_* statement (inside its LogSite), so a line only copies it; with the
// basename's length and the line number, for records.
struct SourceLocation {
  static constexpr size_t kCapacity = 96;
  // " - " before the basename.
  static constexpr size_t kFileOffset = 3;
  char trailer[kCapacity];
  size_t length;
  size_t fileLength;  // the basename's, as the trailer holds it (cut if long)
  int line;
  // Whether that basename is a JSON string's inside as it is (printable
  // ASCII, no quote or backslash): the JSON encoder then copies it.
  bool fileIsPlainJson;
  // The line number's digits, as the trailer holds them.
  std::string_view lineDigits() const {
    const size_t from = kFileOffset + fileLength + 1;  // past the ':'
    return std::string_view(trailer + from, length - from - 1);
  }
};

static_assert(SourceLocation::kCapacity <= LogStream::kLineEndRoom, "a trailer cuts no field's quote");

// The trailer for the `length` bytes of `basename` and `line`. (Not a
// string_view: GCC then stops initializing LogSite statics at compile time.)
constexpr SourceLocation makeTrailer(const char* basename, size_t length, int line) {
  SourceLocation where{};
  size_t n = 0;
  where.trailer[n++] = ' ';
  where.trailer[n++] = '-';
  where.trailer[n++] = ' ';
  // Room is kept for ':', ten digits and '\n'; a longer name is cut.
  where.fileIsPlainJson = true;
  for (size_t i = 0; i < length && n < SourceLocation::kCapacity - 12; ++i) {
    const char c = basename[i];
    // A byte from 0x80 is a negative char: below 0x20 here.
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') where.fileIsPlainJson = false;
    where.trailer[n++] = c;
  }
  where.fileLength = n - SourceLocation::kFileOffset;
  where.trailer[n++] = ':';
  char digits[10] = {};
  size_t count = 0;
  unsigned v = line > 0 ? static_cast<unsigned>(line) : 0u;
  where.line = static_cast<int>(v);
  do {
    digits[count++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (count > 0) where.trailer[n++] = digits[--count];
  where.trailer[n++] = '\n';
  where.length = n;
  return where;
}

constexpr SourceLocation makeSourceLocation(const char* path, int line) {
  const char* base = path + basenameOffset(path);
  size_t length = 0;
  while (base[length] != '\0') ++length;
  return makeTrailer(base, length, line);
}

// Ends the text line in `stream` (its fields closed) with `where`'s
// trailer, after LogStream::kCutMarker if its message was cut; returns
// whether it was. Whoever hands the line out counts a cut one
// (countTruncatedLine): a check that a line decodes does not.
// The same for a trailer's `n` bytes at `trailer` (n <= kCapacity). Out
// of line: the path of a line that reached the room kept for its end.
bool appendTrailerBytes(LogStream& stream, const char* trailer, size_t n);
inline bool appendTrailer(LogStream& stream, const SourceLocation& where) {
  LogStream::Buffer& buf = stream.buffer();
  // A cut line never has avail() left (LogStream pins it): its marker is
  // written on the slow path, and the common line pays no check for it.
  if (__builtin_expect(buf.avail() >= sizeof where.trailer, 1)) {
    // The whole array in one fixed-size copy (a few vector moves, no call);
    // only its first `length` bytes count.
    std::memcpy(buf.current(), where.trailer, sizeof where.trailer);
    buf.add(where.length);
    return false;
  }
  return appendTrailerBytes(stream, where.trailer, where.length);
}
// Counts a line cut to fit (Logger::linesTruncated). Any thread.
void countTruncatedLine();

// ---- the drop report -----------------------------------------------------------

// The one text of a report of messages dropped (kDrop), as AsyncLogging's
// backend and a spool's recovery write it, '\n' included:
//   Dropped log messages at TIME, N larger buffers (M messages)[; NOTE]
// TIME is when the report is written, in local time (Timestamp::
// toFormattedString); NOTE, where given, says whose drops they are (a
// recovery's). Scripts read the counts from this form.
std::string dropReport(Timestamp now, uint64_t buffers, uint64_t messages,
                       std::string_view note = std::string_view());

// ---- read back ---------------------------------------------------------------

// "YYYYmmdd HH:MM:SS.uuuuuu" and an optional 'Z' at the start of `line`: the
// instant (read in `zone` without the 'Z') and the length read, 0 if the
// line does not start so.
size_t readDateTime(std::string_view line, const TimeZone& zone, Timestamp* time);

// Takes `line` (with or without its '\n') apart into *record: its time,
// thread, level, function, message (no fields taken apart: a text line's
// fields are words of its message) and trailer, and `text`, the line;
// views into `line`. False if it does not start with a date-time, a thread
// id and a level name (readers of log files: JSON lines, syslog,
// muon-logcat).
bool parseLine(std::string_view line, const TimeZone& zone, LogRecord* record);

// The level of a text line in muon's layout, read from where the layout puts
// it (after the date-time and the thread id), without reading the time; -1
// for any other line. For outputs that only need the level (the journal's
// <N> prefix on stdout).
int levelOfLine(std::string_view line);

// ---- from a record -------------------------------------------------------------

// Appends what follows the thread id in `record`'s line, without the '\n':
// "INFO  message - file.cc:42" ("DEBUG func message ..."); no trailer for a
// record without a site (file empty), as the backtrace markers.
void appendFromLevel(std::string* out, const LogRecord& record);

}  // namespace detail
}  // namespace muon
