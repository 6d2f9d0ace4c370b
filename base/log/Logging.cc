#include "muon/base/Logging.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <strings.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "muon/base/Backtrace.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/FileIo.h"
#include "muon/base/TimeZone.h"
#include "muon/base/TscClock.h"

namespace muon {

namespace {

// Padded to 8 bytes so that a line copies a fixed 8 (one move) and keeps 6.
constexpr char kLevelNames[Logger::NUM_LOG_LEVELS][8] = {
    "TRACE  ", "DEBUG  ", "INFO   ", "WARN   ", "ERROR  ", "FATAL  ",
};
constexpr size_t kLevelNameLength = 6;
// Date-time, microseconds, 'Z', space, and "%5d " of a tid up to 10 digits;
// copied as a fixed-size block into the empty line buffer.
constexpr size_t kPrefixCapacity = 48;
static_assert(kPrefixCapacity + sizeof kLevelNames[0] < LogStream::kBufferSize, "");

// The default output: each line goes to stdout's descriptor with one
// write(2) as it is logged, not through stdio. stdio holds lines in a 4 KiB
// buffer whenever stdout is not a terminal (a pipe from systemd, docker or
// `| tee`, a file), so they would show up kilobytes late or at exit, be lost
// to a kill or _exit, and be written twice after a fork; a write per line
// has none of that, keeps a line (at most 4000 bytes, under PIPE_BUF) whole
// among other writers of the same pipe, and takes no stdio lock. The price
// is a system call per line (docs/logging.md). EINTR and short writes are
// retried; a line that still fails (EPIPE once the reader has gone and
// SIGPIPE is ignored, ENOSPC) is dropped: stdout was where it could have
// been reported. SIGPIPE is left to the process's disposition, as in
// net/SocketsOps.h: by default a reader that has gone ends the program, as it
// ends `cat`. What the program itself printed through stdio (printf) is
// pushed out first, so that its output and its lines keep their order; with
// nothing pending that costs stdout's lock and no system call.
void defaultOutput(const char* msg, size_t len) {
  std::fflush(stdout);
  static_cast<void>(writeToFd(STDOUT_FILENO, msg, len));
}
// Lines are written already; this pushes out what the program itself has
// put in stdout's buffer (printf), so that it precedes a FATAL line's abort.
void defaultFlush() { std::fflush(stdout); }

std::atomic<Logger::OutputFunc> g_output{&defaultOutput};
std::atomic<Logger::FlushFunc> g_flush{&defaultFlush};

// The attached sink (Logger::attach), reached through two plain functions.
// Cleared before the SinkRef is freed; a line that finds it cleared goes to
// stdout.
std::atomic<const detail::SinkRef*> g_sink{nullptr};
void sinkOutput(const char* msg, size_t len) {
  const detail::SinkRef* ref = g_sink.load(std::memory_order_acquire);
  if (ref) {
    ref->append(ref->sink, msg, len);
  } else {
    defaultOutput(msg, len);
  }
}
void sinkFlush() {
  const detail::SinkRef* ref = g_sink.load(std::memory_order_acquire);
  if (ref) {
    ref->flush(ref->sink);
  } else {
    defaultFlush();
  }
}
// TscClock: the wall clock at half the cost of clock_gettime (see TscClock.h).
std::atomic<Logger::ClockFunc> g_clock{&TscClock::now};

// The zone is swapped rarely and read once per second per thread, so a mutex
// is fine; the generation lets each thread's cache notice a change cheaply.
std::mutex g_timeZoneMutex;
TimeZone& currentTimeZone() {  // guarded by g_timeZoneMutex
  static TimeZone tz;
  return tz;
}
std::atomic<unsigned> g_timeZoneGeneration{0};

// Per-thread cache of the line's prefix up to the level,
//   "20261121 08:15:02.______Z  4321 "
// rebuilt when the second or the zone changes; a line then copies it whole
// and writes only the six microsecond digits. With the default clock the
// cache also holds TscClock's window on the current second, so that a line
// finds its microsecond from the counter alone. The thread id is in the
// prefix, so a forked child drops its copy (the child's thread has a new id).
struct PrefixCache {
  TscClock::SecondWindow window;  // empty unless the clock is TscClock::now
  int64_t second = INT64_MIN;
  unsigned generation = ~0u;
  size_t length = 0;
  uint64_t builds = 0;  // for detail::dateTimeFormatsInThisThread
  char text[kPrefixCapacity] = {};
};
thread_local PrefixCache t_prefix;

constexpr size_t kMicroOffset = 18;  // "20261121 08:15:02." is 18 chars

// The fields of a date-time, each 0..99.
void write2(char* p, int v) { detail::writeTwoDigits(p, static_cast<unsigned>(v)); }

// Writes 0 <= micro < 10^6 as six digits.
void writeMicro(char* p, int micro) {
  const auto m = static_cast<unsigned>(micro);
  detail::writeTwoDigits(p, m / 10000);
  detail::writeTwoDigits(p + 2, m / 100 % 100);
  detail::writeTwoDigits(p + 4, m % 100);
}

void rebuildPrefix(int64_t second, unsigned generation) {
  TimeZone tz = Logger::timeZone();
  DateTime dt = tz.toLocalTime(second);
  char* p = t_prefix.text;
  // Years 0..9999 print as 4 digits; anything else is out of a log's range.
  int year = dt.year < 0 ? 0 : (dt.year > 9999 ? 9999 : dt.year);
  write2(p, year / 100);
  write2(p + 2, year % 100);
  write2(p + 4, dt.month);
  write2(p + 6, dt.day);
  p[8] = ' ';
  write2(p + 9, dt.hour);
  p[11] = ':';
  write2(p + 12, dt.minute);
  p[14] = ':';
  write2(p + 15, dt.second);
  p[17] = '.';
  p += kMicroOffset + 6;  // the digits are written per line
  if (tz.isUtc()) *p++ = 'Z';
  *p++ = ' ';
  std::string_view tid = CurrentThread::tidString();
  std::memcpy(p, tid.data(), tid.size());
  p += tid.size();
  t_prefix.length = static_cast<size_t>(p - t_prefix.text);
  ++t_prefix.builds;
  t_prefix.second = second;
  t_prefix.generation = generation;
}

// fork() copies only the calling thread: had another thread held
// g_timeZoneMutex at that instant, the child's copy would stay locked for
// ever and its first line of a new second would hang. So the fork waits for
// the mutex, and both sides release it.
// The zone's first construction also initializes guarded statics
// (TimeZone's UTC data) outside the mutex, in whichever thread builds a
// TimeZone first: a fork in the middle of that would leave the child waiting
// on the guard for ever. Touching the zone here waits for such a
// construction to finish.
void lockZoneBeforeFork() {
  g_timeZoneMutex.lock();
  currentTimeZone();
}
void unlockZoneInParent() { g_timeZoneMutex.unlock(); }
void unlockZoneAndForgetPrefixInChild() {
  g_timeZoneMutex.unlock();
  t_prefix.second = INT64_MIN;
  t_prefix.window = TscClock::SecondWindow();
}
struct AtForkRegistration {
  AtForkRegistration() {
    ::pthread_atfork(&lockZoneBeforeFork, &unlockZoneInParent, &unlockZoneAndForgetPrefixInChild);
  }
};
AtForkRegistration g_atForkRegistration;

}  // namespace

std::atomic<int> Logger::g_logLevel{detail::initialDefaultLevel()};

namespace {

// The rare-path settings. g_attentionLevel is the lowest level whose lines
// take Logger::writeRare: TRACE while the ring is on (any line may be below
// its statement's level), else min(flush level, FATAL).
std::mutex g_rareMutex;  // serializes the setters below
std::atomic<int> g_flushLevel{Logger::FATAL};
std::atomic<size_t> g_backtraceLines{0};
std::atomic<int> g_attentionLevel{Logger::FATAL};

void updateAttentionLevel() {  // g_rareMutex held
  int level = std::min<int>(Logger::FATAL, g_flushLevel.load(std::memory_order_relaxed));
  if (g_backtraceLines.load(std::memory_order_relaxed) > 0) level = Logger::TRACE;
  g_attentionLevel.store(level, std::memory_order_relaxed);
}

}  // namespace

const char* strerror_tl(int savedErrno) {
  thread_local char t_errnoBuf[512];
  return ::strerror_r(savedErrno, t_errnoBuf, sizeof t_errnoBuf);
}

uint64_t detail::dateTimeFormatsInThisThread() { return t_prefix.builds; }

Logger::Logger(const detail::LogSite& site, LogLevel level)
    : site_(site), level_(level), savedErrno_(0) {
  formatHeader(level);
}

Logger::Logger(const detail::LogSite& site, LogLevel level, const char* func)
    : site_(site), level_(level), savedErrno_(0) {
  formatHeader(level);
  stream_ << func << ' ';
}

Logger::Logger(const detail::LogSite& site, bool toAbort)
    : site_(site), level_(toAbort ? FATAL : ERROR), savedErrno_(errno) {
  formatHeader(level_);
}

namespace {

// The microsecond of a line whose time the window did not cover: reads the
// clock (renewing the window when it is TscClock's) and rebuilds the prefix
// if the second or the zone changed.
__attribute__((noinline)) int refreshPrefix(Logger::ClockFunc clock, unsigned generation) {
  Timestamp now;
  if (clock == &TscClock::now) {
    now = TscClock::nowAndWindow(&t_prefix.window);
  } else {
    t_prefix.window = TscClock::SecondWindow();
    now = clock();
  }
  int64_t second = now.secondsSinceEpoch();
  if (second != t_prefix.second || generation != t_prefix.generation) {
    rebuildPrefix(second, generation);
  }
  return now.microSecondsInSecond();
}

}  // namespace

void Logger::formatHeader(LogLevel level) {
  // The common case reads the counter and finds it in this thread's window
  // on the prefix's second: no shared state but two read-mostly words.
  const ClockFunc clock = g_clock.load(std::memory_order_relaxed);
  const unsigned generation = g_timeZoneGeneration.load(std::memory_order_acquire);
  PrefixCache& cache = t_prefix;
  int micro;
  uint64_t count;
  if (__builtin_expect(clock == &TscClock::now, 1) &&
      cache.window.covers(count = TscClock::readCounter()) && generation == cache.generation) {
    micro = cache.window.microAt(count);
  } else {
    micro = refreshPrefix(clock, generation);
  }

  // Fixed-size copies into the empty 4000-byte buffer; only `length` and
  // kLevelNameLength bytes of them count.
  LogStream::Buffer& buf = stream_.buffer();
  char* p = buf.current();
  std::memcpy(p, cache.text, kPrefixCapacity);
  writeMicro(p + kMicroOffset, micro);
  p += cache.length;
  std::memcpy(p, kLevelNames[level], sizeof kLevelNames[level]);
  p += kLevelNameLength;
  buf.add(static_cast<size_t>(p - buf.current()));
}

void Logger::finish() {
  if (savedErrno_ != 0) {
    stream_ << ": " << strerror_tl(savedErrno_) << " (errno=" << savedErrno_ << ')';
  }
  // The trailer " - file.cc:42\n" (made at compile time) always goes in
  // whole: if the message filled the buffer, its end is cut to make room, so
  // every line ends in '\n'.
  LogStream::Buffer& buf = stream_.buffer();
  const detail::SourceLocation& where = site_.where;
  const size_t n = where.length;
  if (__builtin_expect(buf.avail() >= sizeof where.trailer, 1)) {
    // The whole array in one fixed-size copy (a few vector moves, no call);
    // only its first n bytes count.
    std::memcpy(buf.current(), where.trailer, sizeof where.trailer);
    buf.add(n);
    return;
  }
  if (buf.avail() < n) buf.unwind(n - buf.avail());
  buf.append(where.trailer, n);
}

Logger::~Logger() {
  finish();
  // One compare covers the rare cases: a level that flushes, FATAL, and
  // with the backtrace ring on every line (it may be below its level).
  if (__builtin_expect(level_ >= g_attentionLevel.load(std::memory_order_relaxed), 0)) {
    writeRare();
    return;
  }
  const LogStream::Buffer& buf = stream_.buffer();
  OutputFunc output = g_output.load(std::memory_order_relaxed);
  if (output == &sinkOutput) {
    // An attached sink, called directly rather than through sinkOutput.
    const detail::SinkRef* ref = g_sink.load(std::memory_order_acquire);
    if (ref) {
      ref->append(ref->sink, buf.data(), buf.length());
      return;
    }
  }
  output(buf.data(), buf.length());
}

void Logger::writeRare() {
  const LogStream::Buffer& buf = stream_.buffer();
  const bool backtrace = g_backtraceLines.load(std::memory_order_relaxed) > 0;
  // A FATAL statement's site is never resolved (level kUnresolved): never below.
  if (backtrace && level_ < site_.level.load(std::memory_order_relaxed)) {
    detail::backtracePush(buf.data(), buf.length());
    return;
  }
  OutputFunc output = g_output.load(std::memory_order_relaxed);
  if (backtrace && level_ >= ERROR) writeBacktrace(output);
  output(buf.data(), buf.length());
  if (level_ >= g_flushLevel.load(std::memory_order_relaxed) || level_ == FATAL) flush();
  if (level_ == FATAL) std::abort();
}

void Logger::writeBacktrace(OutputFunc output) {
  std::vector<std::string> lines = detail::backtraceTake();
  if (lines.empty()) return;
  // The markers carry this line's date-time, thread and level, so that they
  // read as log lines; the kept lines keep their own.
  const size_t headerLength = t_prefix.length + kLevelNameLength;
  std::string marker(stream_.buffer().data(), headerLength);
  marker += "---- backtrace: the last ";
  marker += std::to_string(lines.size());
  marker += " lines below the level, oldest first ----\n";
  output(marker.data(), marker.size());
  for (const std::string& line : lines) output(line.data(), line.size());
  marker.resize(headerLength);
  marker += "---- end of backtrace ----\n";
  output(marker.data(), marker.size());
}

void Logger::setFlushLevel(LogLevel level) {
  std::lock_guard<std::mutex> lock(g_rareMutex);
  g_flushLevel.store(level, std::memory_order_relaxed);
  updateAttentionLevel();
}

Logger::LogLevel Logger::flushLevel() {
  return static_cast<LogLevel>(g_flushLevel.load(std::memory_order_relaxed));
}

void Logger::enableBacktrace(size_t lines) {
  std::lock_guard<std::mutex> lock(g_rareMutex);
  detail::backtraceResize(lines);
  g_backtraceLines.store(lines, std::memory_order_relaxed);
  detail::formatBelowLevel(lines > 0);
  updateAttentionLevel();
}

bool Logger::parseLogLevel(const char* name, LogLevel* level) {
  static constexpr const char* kNames[NUM_LOG_LEVELS] = {"trace", "debug", "info",
                                                         "warn",  "error", "fatal"};
  for (int i = 0; i < NUM_LOG_LEVELS; ++i) {
    if (::strcasecmp(name, kNames[i]) == 0) {
      *level = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

void Logger::setOutput(OutputFunc out) {
  g_output.store(out ? out : &defaultOutput, std::memory_order_relaxed);
}

void Logger::setFlush(FlushFunc flush) {
  g_flush.store(flush ? flush : &defaultFlush, std::memory_order_relaxed);
}

void Logger::flush() { g_flush.load(std::memory_order_relaxed)(); }

void detail::attachSink(const SinkRef* ref) {
  g_sink.store(ref, std::memory_order_release);
  g_output.store(&sinkOutput, std::memory_order_release);
  g_flush.store(&sinkFlush, std::memory_order_release);
}

void detail::detachSink(const SinkRef* ref) {
  if (!g_sink.compare_exchange_strong(ref, nullptr, std::memory_order_acq_rel)) {
    return;  // a newer attach() replaced it
  }
  // Only our own functions are put back: a setOutput() made since stays.
  Logger::OutputFunc out = &sinkOutput;
  g_output.compare_exchange_strong(out, &defaultOutput);
  Logger::FlushFunc flush = &sinkFlush;
  g_flush.compare_exchange_strong(flush, &defaultFlush);
}

void Logger::setClock(ClockFunc clock) {
  g_clock.store(clock ? clock : &TscClock::now, std::memory_order_relaxed);
}

Timestamp Logger::now() { return g_clock.load(std::memory_order_relaxed)(); }

void Logger::setTimeZone(const TimeZone& tz) {
  std::lock_guard<std::mutex> lock(g_timeZoneMutex);
  currentTimeZone() = tz;
  g_timeZoneGeneration.fetch_add(1, std::memory_order_release);
}

TimeZone Logger::timeZone() {
  std::lock_guard<std::mutex> lock(g_timeZoneMutex);
  return currentTimeZone();
}

}  // namespace muon
