// Logger and the LOG_* macros: what a server programmer writes.
//
//   LOG_INFO << "accepted " << peer << " fd=" << fd;
//
// Each statement formats one line into a LogStream on the caller's stack and
// hands it to the output function in one call (stdout by default; an
// AsyncLogging backend in servers). The line layout is muduo's:
//
//   20261121 08:15:02.123456Z  4321 INFO  message - file.cc:42
//
// date and time (the 'Z' only in UTC), thread id "%5d ", level padded to 6,
// the message, " - ", the source file's basename and line, '\n'.
// Any thread may log at any time; the setters are safe to call from any
// thread too, but are meant for start-up.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "muon/base/LogAttachment.h"
#include "muon/base/LogStream.h"
#include "muon/base/Timestamp.h"

namespace muon {

class TimeZone;

namespace detail {
// Offset of the basename in a path: "a/b/c.cc" -> 4. constexpr, so the
// macros can compute it at compile time.
constexpr size_t basenameOffset(const char* path) {
  size_t offset = 0;
  for (size_t i = 0; path[i] != '\0'; ++i) {
    if (path[i] == '/') offset = i + 1;
  }
  return offset;
}

// Makes `stream << a << b` a void expression, so that it can be the last
// operand of ?: in the LOG_* macros. '&' binds looser than '<<', so it takes
// the whole chain.
struct LogVoidify {
  void operator&(LogStream&) const {}
};
// What a line ends with, " - file.cc:42\n", built at compile time once per
// LOG_* statement (see MUON_SOURCE_LOCATION), so a line only copies it.
struct SourceLocation {
  static constexpr size_t kCapacity = 96;
  char trailer[kCapacity];
  size_t length;
};

constexpr SourceLocation makeSourceLocation(const char* path, int line) {
  SourceLocation where{};
  size_t n = 0;
  where.trailer[n++] = ' ';
  where.trailer[n++] = '-';
  where.trailer[n++] = ' ';
  // Room is kept for ':', ten digits and '\n'; a longer name is cut.
  const char* base = path + basenameOffset(path);
  for (size_t i = 0; base[i] != '\0' && n < SourceLocation::kCapacity - 12; ++i) {
    where.trailer[n++] = base[i];
  }
  where.trailer[n++] = ':';
  char digits[10] = {};
  size_t count = 0;
  unsigned v = line > 0 ? static_cast<unsigned>(line) : 0u;
  do {
    digits[count++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (count > 0) where.trailer[n++] = digits[--count];
  where.trailer[n++] = '\n';
  where.length = n;
  return where;
}

// For tests: how many times this thread has formatted the date-time part of
// a line. Lines in a second this thread has already formatted reuse it, so
// this grows by one per second logged in (and per time-zone change).
uint64_t dateTimeFormatsInThisThread();
}  // namespace detail

class Logger {
 public:
  enum LogLevel { TRACE, DEBUG, INFO, WARN, ERROR, FATAL, NUM_LOG_LEVELS };

  // `where` is the statement's MUON_SOURCE_LOCATION.
  Logger(const detail::SourceLocation& where, LogLevel level);
  // TRACE and DEBUG lines also name the function.
  Logger(const detail::SourceLocation& where, LogLevel level, const char* func);
  // LOG_SYSERR / LOG_SYSFATAL: the message is followed by errno's text.
  Logger(const detail::SourceLocation& where, bool toAbort);
  // Writes the line; a FATAL line is then flushed and the process aborts.
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  LogStream& stream() { return stream_; }

  static LogLevel logLevel() { return static_cast<LogLevel>(g_logLevel.load(std::memory_order_relaxed)); }
  static void setLogLevel(LogLevel level);
  // "trace", "debug", ... (case-insensitive); false if the name is unknown.
  static bool parseLogLevel(const char* name, LogLevel* level);

  // Where lines go. `msg` is one whole line ending in '\n', valid only
  // during the call. Both must be safe to call from any thread.
  using OutputFunc = void (*)(const char* msg, size_t len);
  using FlushFunc = void (*)();
  static void setOutput(OutputFunc out);  // nullptr: back to stdout
  static void setFlush(FlushFunc flush);  // nullptr: back to fflush(stdout)
  static void flush();                    // calls the flush function

  // Sends every line to `sink` (append/flush, e.g. an AsyncLogging) until
  // the returned LogAttachment is destroyed; then stdout again.
  template <typename Sink>
  static LogAttachment attach(Sink& sink) {
    return LogAttachment(detail::SinkRef{
        &sink,
        [](void* s, const char* line, size_t len) { static_cast<Sink*>(s)->append(line, len); },
        [](void* s) { static_cast<Sink*>(s)->flush(); }});
  }

  // The zone the date-time is printed in (UTC by default).
  static void setTimeZone(const TimeZone& tz);
  static TimeZone timeZone();

  // Where the time of a line comes from (TscClock::now by default); tests
  // and replays inject their own. nullptr restores the default.
  using ClockFunc = Timestamp (*)();
  static void setClock(ClockFunc clock);
  // The time a line logged now would carry (the clock above).
  static Timestamp now();

 private:
  void formatHeader(LogLevel level);
  void finish();

  static std::atomic<int> g_logLevel;

  LogStream stream_;
  const detail::SourceLocation& where_;
  LogLevel level_;
  int savedErrno_;  // LOG_SYSERR's errno, taken before the arguments run; 0 otherwise
};

// Writes errno's text for `savedErrno` into a per-thread buffer.
const char* strerror_tl(int savedErrno);

}  // namespace muon

// A reference to this statement's SourceLocation: a constant in the binary,
// made by the compiler (constexpr), with no guard or run-time work.
#define MUON_SOURCE_LOCATION                                                 \
  ([]() -> const ::muon::detail::SourceLocation& {                           \
    static constexpr ::muon::detail::SourceLocation kWhere =                 \
        ::muon::detail::makeSourceLocation(__FILE__, __LINE__);              \
    return kWhere;                                                           \
  }())

// `!(condition) ? (void)0 : voidify & stream << ...` is one expression: safe
// in an unbraced if/else, and a false condition evaluates none of the <<
// arguments. (The `if (!cond) {} else stream` form binds a user's else right
// too, but GCC's -Wall warns about it as a dangling else at every unbraced
// use.)
#define MUON_LOG_STREAM_IF(condition) \
  !(condition) ? static_cast<void>(0) : ::muon::detail::LogVoidify() &

// Whether statements at `level` (TRACE ... FATAL, unqualified) are written.
#define MUON_LOG_ENABLED(level) (::muon::Logger::logLevel() <= ::muon::Logger::level)

// A Logger for this statement at `level`, as a stream; TRACE and DEBUG lines
// also name the function.
#define MUON_LOGGER_STREAM(level) MUON_LOGGER_STREAM_##level
#define MUON_LOGGER_STREAM_TRACE \
  ::muon::Logger(MUON_SOURCE_LOCATION, ::muon::Logger::TRACE, __func__).stream()
#define MUON_LOGGER_STREAM_DEBUG \
  ::muon::Logger(MUON_SOURCE_LOCATION, ::muon::Logger::DEBUG, __func__).stream()
#define MUON_LOGGER_STREAM_INFO ::muon::Logger(MUON_SOURCE_LOCATION, ::muon::Logger::INFO).stream()
#define MUON_LOGGER_STREAM_WARN ::muon::Logger(MUON_SOURCE_LOCATION, ::muon::Logger::WARN).stream()
#define MUON_LOGGER_STREAM_ERROR ::muon::Logger(MUON_SOURCE_LOCATION, ::muon::Logger::ERROR).stream()
#define MUON_LOGGER_STREAM_FATAL ::muon::Logger(MUON_SOURCE_LOCATION, ::muon::Logger::FATAL).stream()

#define LOG_TRACE MUON_LOG_STREAM_IF(MUON_LOG_ENABLED(TRACE)) MUON_LOGGER_STREAM_TRACE
#define LOG_DEBUG MUON_LOG_STREAM_IF(MUON_LOG_ENABLED(DEBUG)) MUON_LOGGER_STREAM_DEBUG
#define LOG_INFO MUON_LOG_STREAM_IF(MUON_LOG_ENABLED(INFO)) MUON_LOGGER_STREAM_INFO
#define LOG_WARN MUON_LOG_STREAM_IF(MUON_LOG_ENABLED(WARN)) MUON_LOGGER_STREAM_WARN
#define LOG_ERROR MUON_LOG_STREAM_IF(MUON_LOG_ENABLED(ERROR)) MUON_LOGGER_STREAM_ERROR
#define LOG_FATAL MUON_LOGGER_STREAM_FATAL
#define LOG_SYSERR MUON_LOG_STREAM_IF(MUON_LOG_ENABLED(ERROR)) \
  ::muon::Logger(MUON_SOURCE_LOCATION, false).stream()
#define LOG_SYSFATAL ::muon::Logger(MUON_SOURCE_LOCATION, true).stream()

// LOG_IF, LOG_EVERY_N, LOG_FIRST_N, LOG_EVERY_T.
#include "muon/base/RateLimit.h"
// CHECK, CHECK_EQ ..., CHECK_NOTNULL, PCHECK, DCHECK ...
#include "muon/base/Check.h"
