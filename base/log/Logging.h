// Logger and the LOG_* macros: what a server programmer writes.
//
//   LOG_INFO << "accepted " << peer << " fd=" << fd;
//
// Each statement formats one line into a LogStream on the caller's stack and
// hands it to the output function in one call (by default one write(2) to
// stdout's descriptor, so that each line reaches a pipe or file as it is
// logged, not through stdio's buffer), or to an attached sink that takes
// records as a LogRecord (LogRecord.h). With a sink attached that formats
// lines itself (AsyncLogging, not in crash-safe mode), a statement formats
// nothing: it records its operands into its thread's queue (RecordQueue.h)
// and the sink's backend thread makes the same line (deferred formatting).
// The line layout is muduo's (LineLayout.h):
//
//   20261121 08:15:02.123456Z  4321 INFO  message - file.cc:42
//
// date and time (the 'Z' only in UTC), thread id "%5d ", level padded to 6,
// the message, " - ", the source file's basename and line, '\n'.
// Any thread may log at any time; the setters are safe to call from any
// thread too, but are meant for start-up. The settings are one immutable
// configuration that each setter replaces whole (LoggerConfig.h); a line
// being formatted while a setting changes follows the old or the new one.
//
// Also here, as in glog's logging.h: LOG_IF, LOG_EVERY_N, LOG_FIRST_N,
// LOG_EVERY_T (RateLimit.h); CHECK, CHECK_EQ ..., CHECK_NOTNULL, PCHECK,
// DCHECK ... (Check.h); per-module levels, the backtrace ring and the flush
// level (Logger below). A program that also includes glog's logging.h in the
// same file gets clashing macro names.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "muon/base/LineFormat.h"
#include "muon/base/LogAttachment.h"
#include "muon/base/LogFields.h"
#include "muon/base/internal/LogSite.h"
#include "muon/base/LogStream.h"
#include "muon/base/Timestamp.h"

namespace muon {

class TimeZone;
struct LogRecord;

namespace detail {

struct LoggerConfig;
class RecordQueue;
class Statement;

// When a statement began, for one that Logger formats at its end
// (Statement.h): the counter then, and the clock's time when the clock is
// not the counter (Logger::setClock, or no invariant counter).
struct StatementTime {
  uint64_t count;
  Timestamp time;
};

// Whether Sink has append(const LogRecord&), for Logger::attach.
template <typename Sink, typename = void>
struct TakesRecords : std::false_type {};
template <typename Sink>
struct TakesRecords<Sink, std::void_t<decltype(std::declval<Sink&>().append(
                              std::declval<const LogRecord&>()))>> : std::true_type {};

// Whether Sink says which lines it writes (has LineFormat lineFormat()):
// one that writes another format than text takes statements' records, which
// say where their fields are, and writes each in its format
// (writeEncodedRecord).
template <typename Sink, typename = void>
struct HasLineFormat : std::false_type {};
template <typename Sink>
struct HasLineFormat<Sink, std::void_t<decltype(std::declval<const Sink&>().lineFormat())>>
    : std::true_type {};
// Hands write(sink, line, len) the line of `record` in `format`
// (LineEncoders.h; encode/).
void writeEncodedRecord(LineFormat format, const LogRecord& record,
                        void (*write)(void*, const char*, size_t), void* sink);

// Whether Sink formats statements' records itself (has recordSink()).
template <typename Sink, typename = void>
struct FormatsRecords : std::false_type {};
template <typename Sink>
struct FormatsRecords<Sink, std::void_t<decltype(std::declval<Sink&>().recordSink())>>
    : std::true_type {};

// Makes `stream << a << b` a void expression, so that it can be the last
// operand of ?: in the LOG_* macros. '&' binds looser than '<<', so it takes
// the whole chain.
struct LogVoidify {
  void operator&(LogStream&) const {}
};
// For tests: how many times this thread has formatted the date-time part of
// a line. Lines in a second this thread has already formatted reuse it, so
// this grows by one per second logged in (and per time-zone change).
uint64_t dateTimeFormatsInThisThread();
}  // namespace detail

class Logger {
 public:
  enum LogLevel { TRACE, DEBUG, INFO, WARN, ERROR, FATAL, NUM_LOG_LEVELS };

  // `site` is the statement's MUON_LOG_SITE: where it is (the line's
  // trailer) and its level (a line below it, possible while the backtrace
  // ring is on, goes to the ring instead of the output).
  Logger(const detail::LogSite& site, LogLevel level);
  // TRACE and DEBUG lines also name the function.
  Logger(const detail::LogSite& site, LogLevel level, const char* func);
  // LOG_SYSERR / LOG_SYSFATAL: the message is followed by errno's text.
  Logger(const detail::LogSite& site, bool toAbort);
  // Writes the line; a FATAL line is then flushed and the process aborts.
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  LogStream& stream() { return stream_; }

  // The default level: statements in files no module level matches.
  static LogLevel logLevel();
  static void setLogLevel(LogLevel level);
  // "trace", "debug", ... (case-insensitive); false if the name is unknown.
  static bool parseLogLevel(const char* name, LogLevel* level);

  // Per-module levels, as glog's --vmodule: statements in source files that
  // `pattern` matches log at `level` instead of the default. A pattern
  // without '/' is matched against the file's basename, with and without its
  // extension ("TcpConnection" matches TcpConnection.cc and .h); one with '/'
  // against the path's trailing components ("net/*" matches
  // /src/muon/net/Buffer.cc). Globs are fnmatch(3)'s: * ? [...], and '*'
  // does not cross a '/'. Where several patterns match, the one set last
  // wins; setting a pattern again replaces its level and makes it the last.
  // Lines already being formatted are not affected.
  static void setModuleLevel(const std::string& pattern, LogLevel level);
  static void clearModuleLevels();
  // MUON_LOG_LEVEL's syntax, "info,TcpConnection=trace,net/*=debug": at most
  // one bare level (the default; info if none) and PATTERN=LEVEL entries,
  // comma-separated, in setModuleLevel order. Replaces the default and every
  // module level. A malformed spec changes nothing: false, and `error` (if
  // not null) says what is wrong. MUON_LOG_LEVEL is read once, at start-up;
  // a malformed one is reported on stderr and leaves info with no modules.
  static bool setLogLevels(const char* spec, std::string* error = nullptr);

  // Lines at or above `level` are flushed (Logger::flush) before their
  // statement returns: with AsyncLogging behind the flush, they have been
  // handed to write(2). FATAL lines always are; the default is FATAL.
  static void setFlushLevel(LogLevel level);
  static LogLevel flushLevel();

  // Keeps the last `lines` lines that were below their statement's level in
  // a ring (off, 0, by default), and writes them, oldest first, between two
  // marker lines, just before the next ERROR or FATAL line; the ring is then
  // empty. While it is on, statements below the level are formatted (into
  // the ring) instead of skipped: they cost what an enabled line costs.
  // 0 turns it off and drops what it held.
  static void enableBacktrace(size_t lines);

  // Where lines go. `msg` is one whole line ending in '\n', valid only
  // during the call. Both must be safe to call from any thread.
  using OutputFunc = void (*)(const char* msg, size_t len);
  using FlushFunc = void (*)();
  static void setOutput(OutputFunc out);  // nullptr: back to write(2) to stdout
  static void setFlush(FlushFunc flush);  // nullptr: back to fflush(stdout)
  static void flush();                    // calls the flush function

  // Sends every line to `sink`, and only to it, until the returned
  // LogAttachment is destroyed; then stdout again. A sink with
  // append(const LogRecord&) gets records (LogRecord.h), one with
  // append(const char* line, size_t len) the text; flush() gets the flushes
  // (LogAttachment.h). It replaces every sink attached before.
  template <typename Sink>
  static LogAttachment attach(Sink& sink) {
    return LogAttachment(sinkRef(sink));
  }

  // Several outputs at once (a file and the console, a file and syslog):
  //
  //   auto toFile = Logger::addSink(asyncLogging);
  //   auto toConsole = Logger::addSink(stdoutSink, {Logger::WARN});
  //
  // Each line goes to every sink added (and to one attach()ed before, which
  // it joins) whose minLevel it reaches; Logger::flush(), a flush level and
  // FATAL flush every sink. Each returned LogAttachment takes only its own
  // sink away, in any order; with none left, lines go to stdout again.
  // A line is then formatted once, by the statement, and handed to each
  // sink, as text or as a record as the sink takes it: an AsyncLogging
  // defers formatting only while it is the one sink and has no minLevel.
  struct SinkOptions {
    // Constructors of its own, noexcept: clang cannot use the member's
    // default initializer for the default argument below, inside Logger
    // (an implicit constructor's exception specification needs it). The
    // second keeps `addSink(sink, {Logger::WARN})`.
    SinkOptions() noexcept {}
    SinkOptions(LogLevel level) noexcept : minLevel(level) {}  // NOLINT(runtime/explicit)
    // Lines below it skip this sink. It filters what the levels
    // (setLogLevel, module levels) let through: a line no sink takes is
    // still formatted, so keep the Logger's level at the lowest minLevel.
    LogLevel minLevel = TRACE;
  };
  template <typename Sink>
  static LogAttachment addSink(Sink& sink, SinkOptions options = SinkOptions()) {
    return LogAttachment(sinkRef(sink), options.minLevel);
  }

  // Lines whose message was cut to fit a line (LogStream.h: a message
  // stops LogStream::kMessageEnd bytes into its line, and the line then
  // ends in " log.truncated=true", its fields and trailer kept), in this
  // process, whichever thread formatted them: a statement, AsyncLogging's
  // backend, a crash-safe recovery. Each line is counted once, when it is
  // formatted. Any thread.
  static uint64_t linesTruncated();

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
  // `sink` seen through plain functions (LogAttachment.h).
  template <typename Sink>
  static detail::SinkRef sinkRef(Sink& sink) {
    detail::SinkRef ref;
    ref.sink = &sink;
    if constexpr (detail::TakesRecords<Sink>::value) {
      ref.appendRecord = [](void* s, const LogRecord& record) {
        static_cast<Sink*>(s)->append(record);
      };
    } else {
      ref.appendText = [](void* s, const char* line, size_t len) {
        static_cast<Sink*>(s)->append(line, len);
      };
    }
    if constexpr (detail::HasLineFormat<Sink>::value) {
      if (sink.lineFormat() != LineFormat::kText) {
        ref.appendText = nullptr;
        ref.appendRecord = [](void* s, const LogRecord& record) {
          detail::writeEncodedRecord(
              static_cast<const Sink*>(s)->lineFormat(), record,
              [](void* to, const char* line, size_t len) { static_cast<Sink*>(to)->append(line, len); },
              s);
        };
      }
    }
    ref.flush = [](void* s) { static_cast<Sink*>(s)->flush(); };
    if constexpr (detail::FormatsRecords<Sink>::value) {
      ref.records = sink.recordSink();
      ref.recordedLineGate = sink.recordedLineGate();
      if (ref.recordedLineGate != nullptr) {
        ref.appendRecordedLine = [](void* s, const char* line, size_t len, size_t head,
                                    size_t trailer) {
          static_cast<Sink*>(s)->appendRecordedLine(line, len, head, trailer);
        };
      }
    }
    return ref;
  }

  friend class detail::Statement;
  // A statement's Logger at its end, with the time it began.
  Logger(const detail::LogSite& site, LogLevel level, const detail::StatementTime& began);

  // Loads the configuration and starts the line: a record if a sink that
  // formats records is attached (and the backtrace ring is off), else text.
  void begin();
  // No room in place: a record in the statement's own buffer (true), or,
  // when the queue is crowded, text (false) unless the sink makes crowded
  // records' lines itself (RecordSink::takesCrowdedRecords).
  bool startRecordElsewhere();
  void startRecord();
  // LogStream's TextFallback: a record that outgrew its buffer becomes text.
  static void recordToText(void* self, LogStream& stream);
  // RecordQueue's MoveOut: a statement nested in this one's operands needs
  // the queue; this record leaves it for the statement's own buffer.
  static void moveRecordOut(void* self);
  void formatHeader(LogLevel level);
  // A statement's line from its recorded operands, made and written where
  // a Logger of it would make text and write it on its common path (no
  // context fields, a level below the attention level, a text sink, or a
  // record queue that is crowded); false, with nothing done, elsewhere.
  // `crowded`: the statement found its queue crowded as it began, a look
  // this one need not repeat.
  static bool writeStatementText(const detail::LogSite& site, LogLevel level,
                                 const detail::StatementTime& began, const char* operands,
                                 size_t n, bool crowded);
  // Puts the record in this thread's queue (or counts it dropped).
  void commitRecord();
  // A crowded record's line, made by the sink (RecordSink::appendCrowded);
  // false, with nothing written, where the sink leaves it to text.
  bool commitCrowded(const detail::LoggerConfig& config);
  bool commitRecorded(const detail::LoggerConfig& config);
  // Ends the recorded line with its trailer and hands it to the sink; false
  // if it had to become text instead.
  bool commitRecordedLine(const detail::LoggerConfig& config);
  // The line as a record, for a sink that takes records.
  LogRecord record() const;
  // Hands the line to the configured output or sink, as text or record.
  void write(const detail::LoggerConfig& config) const;
  void writeAsRecord(const detail::SinkRef& sink) const;
  // Records, the backtrace ring, flush level and FATAL: off the common path.
  void writeRare(const detail::LoggerConfig& config);
  void keepInBacktrace() const;
  void writeBacktrace(const detail::LoggerConfig& config);

  LogStream stream_;
  const detail::LogSite& site_;
  LogLevel level_;
  int savedErrno_;  // LOG_SYSERR's errno, taken before the arguments run; 0 otherwise
  // For record(): where in the buffer the function's name begins (TRACE
  // and DEBUG; 0: none), which is where the level name ends, and where the
  // message does; the microsecond and second the line's date-time shows.
  uint32_t functionBegin_ = 0;  // next to savedErrno_: both zeroed in one store
  uint32_t messageBegin_;
  int micro_;
  int64_t second_;
  // The configuration the statement follows, loaded once (begin).
  const detail::LoggerConfig* config_;
  // When the statement began, if it was not when the Logger was made.
  const detail::StatementTime* began_ = nullptr;
  // A record's: its queue, where it is written in place (nullptr: in
  // stream_'s own buffer), its order key and time, and its kind (RecordQueue.h).
  detail::RecordQueue* queue_;
  char* record_;
  uint64_t recordKey_;
  int64_t recordTime_;
  uint8_t recordKind_;
  // The queue was crowded when the record began: its line is made here, from
  // the recorded operands, by the sink's appendCrowded (commitCrowded).
  bool crowdedRecord_;
};

// Writes errno's text for `savedErrno` into a per-thread buffer.
const char* strerror_tl(int savedErrno);

}  // namespace muon

// `!(condition) ? (void)0 : voidify & stream << ...` is one expression: safe
// in an unbraced if/else, and a false condition evaluates none of the <<
// arguments. (The `if (!cond) {} else stream` form binds a user's else right
// too, but GCC's -Wall warns about it as a dangling else at every unbraced
// use.) Used by CHECK, which needs no LogSite.
#define MUON_LOG_STREAM_IF(condition) \
  !(condition) ? static_cast<void>(0) : ::muon::detail::LogVoidify() &

// This statement's LogSite, registered when the program is loaded
// (LogSite.h): the instance of siteFor for a class local to a lambda of the
// statement's own, constant-initialized (its trailer made by the compiler;
// no guard on the path).
#define MUON_LOG_SITE                                                  \
  ([]() -> ::muon::detail::LogSite& {                                  \
    struct MuonSiteTag {                                               \
      static constexpr const char* file() { return __FILE__; }         \
      static constexpr int line() { return __LINE__; }                 \
    };                                                                 \
    static_cast<void>(::muon::detail::siteRegistered<MuonSiteTag>);    \
    return ::muon::detail::siteFor<MuonSiteTag>;                       \
  }())

// The site of a statement whose level is never looked at (LOG_FATAL,
// LOG_SYSFATAL, a failed CHECK: FATAL is never below a site's level, and no
// level silences it): not registered, so that it costs neither the load nor
// a level change anything.
#define MUON_FATAL_SITE                                                \
  ([]() -> ::muon::detail::LogSite& {                                  \
    static ::muon::detail::LogSite muon_site{__FILE__, __LINE__};      \
    return muon_site;                                                  \
  }())

// Runs the statement that follows (the Logger and the user's << operands) at
// most once: if `level` is formatted at this site and then `condition`
// holds; it names the site `muon_log_site`. A for, not an if: a user's else
// after an unbraced LOG_* binds to the user's if without a dangling-else
// warning, and unlike ?: the site is visible to the statement. A disabled
// level costs admit()'s one relaxed load and compare. (A LOG_* inside a
// lambda inside another's << operands redeclares muon_log_site: -Wshadow.)
#define MUON_LOG_AT_IF(level, condition)                                            \
  for (::muon::detail::LogSite* muon_log_site =                                     \
           ::muon::detail::admit(MUON_LOG_SITE, ::muon::Logger::level);               \
       muon_log_site != nullptr && (condition); muon_log_site = nullptr)                \
    for (::muon::detail::Statement muon_statement(*muon_log_site); muon_statement.pending; \
         muon_statement.pending = false)

// A Logger for the statement at `level` (inside MUON_LOG_AT_IF), as a stream;
// TRACE and DEBUG lines also name the function.
#define MUON_LOGGER_STREAM(level) MUON_LOGGER_STREAM_##level
#define MUON_LOGGER_STREAM_WITH_FUNC(level) \
  ::muon::Logger(*muon_statement.site, ::muon::Logger::level, __func__).stream()
#define MUON_LOGGER_STREAM_AT(level) \
  muon_statement & muon_statement.begin<::muon::Logger::level>()
#define MUON_LOGGER_STREAM_TRACE MUON_LOGGER_STREAM_WITH_FUNC(TRACE)
#define MUON_LOGGER_STREAM_DEBUG MUON_LOGGER_STREAM_WITH_FUNC(DEBUG)
#define MUON_LOGGER_STREAM_INFO MUON_LOGGER_STREAM_AT(INFO)
#define MUON_LOGGER_STREAM_WARN MUON_LOGGER_STREAM_AT(WARN)
#define MUON_LOGGER_STREAM_ERROR MUON_LOGGER_STREAM_AT(ERROR)
#define MUON_LOGGER_STREAM_FATAL MUON_LOGGER_STREAM_AT(FATAL)

// FATAL lines skip the level check: no level or module silences them.
#define MUON_FATAL_STREAM ::muon::Logger(MUON_FATAL_SITE, ::muon::Logger::FATAL).stream()

#define LOG_TRACE MUON_LOG_AT_IF(TRACE, true) MUON_LOGGER_STREAM_TRACE
#define LOG_DEBUG MUON_LOG_AT_IF(DEBUG, true) MUON_LOGGER_STREAM_DEBUG
#define LOG_INFO MUON_LOG_AT_IF(INFO, true) MUON_LOGGER_STREAM_INFO
#define LOG_WARN MUON_LOG_AT_IF(WARN, true) MUON_LOGGER_STREAM_WARN
#define LOG_ERROR MUON_LOG_AT_IF(ERROR, true) MUON_LOGGER_STREAM_ERROR
#define LOG_FATAL MUON_FATAL_STREAM
#define LOG_SYSERR MUON_LOG_AT_IF(ERROR, true) ::muon::Logger(*muon_statement.site, false).stream()
#define LOG_SYSFATAL ::muon::Logger(MUON_FATAL_SITE, true).stream()

// The statement's common path (MUON_LOGGER_STREAM_AT).
#include "muon/base/internal/Statement.h"
// LOG_IF, LOG_EVERY_N, LOG_FIRST_N, LOG_EVERY_T.
#include "muon/base/internal/RateLimit.h"
// CHECK, CHECK_EQ ..., CHECK_NOTNULL, PCHECK, DCHECK ...
#include "muon/base/internal/Check.h"
