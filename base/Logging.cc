#include "muon/base/Logging.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <strings.h>

#include "muon/base/CurrentThread.h"
#include "muon/base/TimeZone.h"
#include "muon/base/TscClock.h"

namespace muon {

namespace {

constexpr const char* kLevelNames[Logger::NUM_LOG_LEVELS] = {
    "TRACE ", "DEBUG ", "INFO  ", "WARN  ", "ERROR ", "FATAL ",
};
constexpr size_t kLevelNameLength = 6;

Logger::LogLevel initialLogLevel() {
  Logger::LogLevel level = Logger::INFO;
  const char* env = std::getenv("MUON_LOG_LEVEL");
  if (env && *env && !Logger::parseLogLevel(env, &level)) {
    std::fprintf(stderr,
                 "muon: ignoring MUON_LOG_LEVEL=%s (expected trace, debug, info, warn, error "
                 "or fatal); using info\n",
                 env);
  }
  return level;
}

void defaultOutput(const char* msg, size_t len) { std::fwrite(msg, 1, len, stdout); }
void defaultFlush() { std::fflush(stdout); }

std::atomic<Logger::OutputFunc> g_output{&defaultOutput};
std::atomic<Logger::FlushFunc> g_flush{&defaultFlush};
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

// Per-thread cache of "YYYYmmdd HH:MM:SS", rebuilt when the second or the
// zone changes: the costly part of a line is then done once per second.
struct TimeCache {
  int64_t second = INT64_MIN;
  unsigned generation = ~0u;
  bool utc = true;
  char text[24];
};
thread_local TimeCache t_timeCache;

constexpr size_t kDateTimeLength = 17;  // "20261121 08:15:02"

void write2(char* p, int v) {
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
}

void rebuildTimeCache(int64_t second, unsigned generation) {
  TimeZone tz = Logger::timeZone();
  DateTime dt = tz.toLocalTime(second);
  char* p = t_timeCache.text;
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
  t_timeCache.second = second;
  t_timeCache.generation = generation;
  t_timeCache.utc = tz.isUtc();
}

}  // namespace

std::atomic<int> Logger::g_logLevel{initialLogLevel()};

const char* strerror_tl(int savedErrno) {
  thread_local char t_errnoBuf[512];
  return ::strerror_r(savedErrno, t_errnoBuf, sizeof t_errnoBuf);
}

Logger::Logger(SourceFile file, int line, LogLevel level)
    : file_(file), line_(line), level_(level), savedErrno_(0) {
  formatHeader(level);
}

Logger::Logger(SourceFile file, int line, LogLevel level, const char* func)
    : file_(file), line_(line), level_(level), savedErrno_(0) {
  formatHeader(level);
  stream_ << func << ' ';
}

Logger::Logger(SourceFile file, int line, bool toAbort)
    : file_(file), line_(line), level_(toAbort ? FATAL : ERROR), savedErrno_(errno) {
  formatHeader(level_);
}

void Logger::formatHeader(LogLevel level) {
  Timestamp now = g_clock.load(std::memory_order_relaxed)();
  int64_t second = now.secondsSinceEpoch();
  int micro = now.microSecondsInSecond();
  unsigned generation = g_timeZoneGeneration.load(std::memory_order_acquire);
  if (second != t_timeCache.second || generation != t_timeCache.generation) {
    rebuildTimeCache(second, generation);
  }

  // The header is at most 17 + 9 + 32 + 6 bytes: it always fits the empty buffer.
  LogStream::Buffer& buf = stream_.buffer();
  char* p = buf.current();
  std::memcpy(p, t_timeCache.text, kDateTimeLength);
  p += kDateTimeLength;
  *p++ = '.';
  write2(p, micro / 10000);
  write2(p + 2, micro / 100 % 100);
  write2(p + 4, micro % 100);
  p += 6;
  if (t_timeCache.utc) *p++ = 'Z';
  *p++ = ' ';
  std::string_view tid = CurrentThread::tidString();
  std::memcpy(p, tid.data(), tid.size());
  p += tid.size();
  std::memcpy(p, kLevelNames[level], kLevelNameLength);
  p += kLevelNameLength;
  buf.add(static_cast<size_t>(p - buf.current()));
}

void Logger::finish() {
  if (savedErrno_ != 0) {
    stream_ << ": " << strerror_tl(savedErrno_) << " (errno=" << savedErrno_ << ')';
  }
  // The trailer " - file.cc:42\n" always goes in whole: if the message filled
  // the buffer, its end is cut to make room, so every line ends in '\n'.
  char trailer[300];
  size_t fileLength = file_.size < 256 ? file_.size : 256;
  size_t n = 0;
  std::memcpy(trailer, " - ", 3);
  n += 3;
  std::memcpy(trailer + n, file_.data, fileLength);
  n += fileLength;
  trailer[n++] = ':';
  n += detail::convertDecimal(trailer + n, static_cast<long long>(line_));
  trailer[n++] = '\n';

  LogStream::Buffer& buf = stream_.buffer();
  if (buf.avail() < n) buf.unwind(n - buf.avail());
  buf.append(trailer, n);
}

Logger::~Logger() {
  finish();
  const LogStream::Buffer& buf = stream_.buffer();
  g_output.load(std::memory_order_relaxed)(buf.data(), buf.length());
  if (level_ == FATAL) {
    flush();
    std::abort();
  }
}

void Logger::setLogLevel(LogLevel level) {
  g_logLevel.store(level, std::memory_order_relaxed);
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

void Logger::setClock(ClockFunc clock) {
  g_clock.store(clock ? clock : &TscClock::now, std::memory_order_relaxed);
}

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
