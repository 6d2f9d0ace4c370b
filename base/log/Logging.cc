#include "muon/base/Logging.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "muon/base/internal/BacktraceRing.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/internal/FileIo.h"
#include "muon/base/LogRecord.h"
#include "muon/base/internal/LogSinks.h"
#include "muon/base/internal/LoggerConfig.h"
#include "muon/base/internal/OperandReplay.h"
#include "muon/base/internal/RecordQueue.h"
#include "muon/base/TimeZone.h"
#include "muon/base/TscClock.h"

namespace muon {

namespace detail {

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
//
// Under systemd, when stdout is the journal (JOURNAL_STREAM names stdout's
// device and inode, as systemd sets it for a service), each line of muon's
// layout gets its level's syslog severity in front, "<6>" for INFO
// (sd-daemon's convention), so that journald keeps the levels: journalctl
// -p warning shows the warnings. Checked once, at the first line.
namespace {

bool stdoutIsTheJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long device = 0, inode = 0;
  if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return false;
  struct stat st;
  return ::fstat(STDOUT_FILENO, &st) == 0 && static_cast<unsigned long long>(st.st_dev) == device &&
         static_cast<unsigned long long>(st.st_ino) == inode;
}

void writeWithSeverity(const char* msg, size_t len) {
  const int level = levelOfLine(std::string_view(msg, len));
  if (level < 0) {
    static_cast<void>(writeToFd(STDOUT_FILENO, msg, len));
    return;
  }
  // One write, as for every line: the prefix and the line in one buffer.
  char line[4096 + 3];
  if (len > sizeof line - 3) {
    const char prefix[3] = {'<', static_cast<char>('0' + syslogSeverity(level)), '>'};
    static_cast<void>(writeToFd(STDOUT_FILENO, prefix, sizeof prefix));
    static_cast<void>(writeToFd(STDOUT_FILENO, msg, len));
    return;
  }
  line[0] = '<';
  line[1] = static_cast<char>('0' + syslogSeverity(level));
  line[2] = '>';
  std::memcpy(line + 3, msg, len);
  static_cast<void>(writeToFd(STDOUT_FILENO, line, len + 3));
}

}  // namespace

void defaultOutput(const char* msg, size_t len) {
  std::fflush(stdout);
  static const bool toJournal = stdoutIsTheJournal();
  if (__builtin_expect(toJournal, 0)) {
    writeWithSeverity(msg, len);
    return;
  }
  static_cast<void>(writeToFd(STDOUT_FILENO, msg, len));
}
// Lines are written already; this pushes out what the program itself has
// put in stdout's buffer (printf), so that it precedes a FATAL line's abort.
void defaultFlush() { std::fflush(stdout); }

}  // namespace detail

namespace {

// Logger::linesTruncated(): one relaxed add per cut line, on its slow path.
std::atomic<uint64_t> g_linesTruncated{0};

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
  detail::LinePrefix prefix;
};
thread_local PrefixCache t_prefix;

// The calling thread's innermost LogContext (LogFields.h), and how many
// fields its contexts hold together: a statement looks at the count only.
thread_local const LogContext* t_context = nullptr;

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
  t_prefix.prefix.second = INT64_MIN;
  t_prefix.window = TscClock::SecondWindow();
}
struct AtForkRegistration {
  AtForkRegistration() {
    ::pthread_atfork(&lockZoneBeforeFork, &unlockZoneInParent, &unlockZoneAndForgetPrefixInChild);
  }
};
AtForkRegistration g_atForkRegistration;

}  // namespace

const char* strerror_tl(int savedErrno) {
  thread_local char t_errnoBuf[512];
  return ::strerror_r(savedErrno, t_errnoBuf, sizeof t_errnoBuf);
}

void detail::countTruncatedLine() { g_linesTruncated.fetch_add(1, std::memory_order_relaxed); }

uint64_t Logger::linesTruncated() { return g_linesTruncated.load(std::memory_order_relaxed); }

uint64_t detail::dateTimeFormatsInThisThread() { return t_prefix.prefix.builds; }

unsigned detail::timeZoneGeneration() {
  return g_timeZoneGeneration.load(std::memory_order_acquire);
}

void detail::LinePrefix::rebuild(int64_t sec, unsigned zoneGeneration, std::string_view tid) {
  TimeZone tz = Logger::timeZone();
  length = writePrefix(text, tz.toLocalTime(sec), tz.isUtc(), tid);
  ++builds;
  second = sec;
  generation = zoneGeneration;
}

Logger::Logger(const detail::LogSite& site, LogLevel level)
    : site_(site), level_(level), savedErrno_(0) {
  begin();
}

Logger::Logger(const detail::LogSite& site, LogLevel level, const char* func)
    : site_(site), level_(level), savedErrno_(0) {
  begin();
  functionBegin_ = messageBegin_;
  stream_ << func << ' ';
  messageBegin_ = static_cast<uint32_t>(stream_.buffer().length());
}

Logger::Logger(const detail::LogSite& site, LogLevel level, const detail::StatementTime& began)
    : site_(site), level_(level), savedErrno_(0), began_(&began) {
  begin();
}

Logger::Logger(const detail::LogSite& site, bool toAbort)
    : site_(site), level_(toAbort ? FATAL : ERROR), savedErrno_(errno) {
  begin();
}

namespace {
constexpr size_t kLargestRecord = detail::recordSize(LogStream::kBufferSize);
}  // namespace

inline void Logger::begin() {
  // The statement's one look at the configuration.
  config_ = &detail::loggerConfig();
  queue_ = nullptr;
  crowdedRecord_ = false;
  detail::RecordSink* records = config_->records;
  if (records != nullptr && (queue_ = detail::recordQueueFor(*records)) != nullptr) {
    // A record, in place in the queue when there is room without waiting
    // (the common case).
    record_ = queue_->tryReserve(kLargestRecord);
    if (__builtin_expect(record_ != nullptr, 1) || startRecordElsewhere()) {
      startRecord();
      return;
    }
  }
  formatHeader(level_);
  // A sink that wants recorded lines now: the operands are recorded after the head.
  const std::atomic<bool>* gate = config_->recordedLineGate;
  if (gate != nullptr && gate->load(std::memory_order_relaxed)) {
    stream_.startRecording(nullptr, nullptr);
  }
}

bool Logger::startRecordElsewhere() {
  // Crowded (RecordQueue::crowded): the backend is behind, and a line this thread
  // formats costs it less than a record. Text, then, into the same queue;
  // or, for a sink that makes such lines from operands, a record in this
  // statement's own buffer, which the sink makes the line of at the end.
  if (queue_->crowded()) {
    if (!config_->records->takesCrowdedRecords()) return false;
    crowdedRecord_ = true;
    record_ = nullptr;
    return true;
  }
  // Else the ring's end, or a stale view of the consumer: in place after
  // all, or in this statement's own buffer, copied in (and wrapped) at the end.
  record_ = queue_->tryReserve(kLargestRecord);
  return true;
}

void Logger::startRecord() {
  if (__builtin_expect(record_ != nullptr, 1)) {
    stream_.buffer().redirect(record_ + sizeof(detail::RecordHeader));
    queue_->openInPlace(this, &Logger::moveRecordOut);
  }
  stream_.startRecording(&Logger::recordToText, this);
  // The counter orders records; with the default clock running on it, it
  // is the line's time too, which the backend converts.
  const uint64_t count = began_ != nullptr ? began_->count : TscClock::readCounter();
  recordKey_ = count;
  const ClockFunc clock = g_clock.load(std::memory_order_relaxed);
  if (__builtin_expect(clock == &TscClock::now && TscClock::countsAreTime(), 1)) {
    recordKind_ = detail::RecordHeader::kStatementCount;
    recordTime_ = static_cast<int64_t>(count);
  } else {
    recordKind_ = detail::RecordHeader::kStatementMicros;
    recordTime_ = (began_ != nullptr ? began_->time : clock()).microSecondsSinceEpoch();
  }
}

void Logger::moveRecordOut(void* self) {
  Logger* logger = static_cast<Logger*>(self);
  logger->stream_.buffer().moveToOwnStorage();
  logger->record_ = nullptr;
}

void Logger::recordToText(void* self, LogStream&) {
  Logger* logger = static_cast<Logger*>(self);
  if (logger->record_ != nullptr) {
    logger->queue_->closeInPlace();
    logger->record_ = nullptr;
  }
  logger->formatHeader(logger->level_);
}

// The record to the queue, or the recorded line to the sink; false if the
// line became text after all.
inline bool Logger::commitRecorded(const detail::LoggerConfig& config) {
  if (queue_ == nullptr) return commitRecordedLine(config);
  // Its line goes where this thread's lines go now (RecordQueue::appendLine).
  if (__builtin_expect(crowdedRecord_, 0)) return commitCrowded(config);
  // A line logged from its operands took the thread to the shared mode:
  // this one, logged after it, goes there too, after it, as text.
  if (__builtin_expect(queue_->shared(), 0)) {
    stream_.stopRecording();
    return false;
  }
  commitRecord();
  return true;
}

namespace {
// Past this many bytes of recorded operands a crash-safe statement formats
// its line itself: such operands are mostly strings, which recording
// copies as formatting would, so deferring saves the caller little, while
// the backend, formatting alone, would pass over them a second time.
constexpr size_t kMaxRecordedOperands = 1024;
}  // namespace

bool Logger::commitRecordedLine(const detail::LoggerConfig& config) {
  LogStream::Buffer& buf = stream_.buffer();
  const detail::SourceLocation& where = site_.where;
  // Recorded operands cannot be cut to make room for the trailer, as text
  // is: a line that has no room for it becomes text.
  if (__builtin_expect(buf.avail() < where.length ||
                           buf.length() - stream_.recordedFrom() > kMaxRecordedOperands,
                       0)) {
    stream_.stopRecording();
    return false;
  }
  buf.append(where.trailer, where.length);
  config.sink.appendRecordedLine(config.sink.sink, buf.data(), buf.length(),
                                 stream_.recordedFrom(), where.length);
  return true;
}

void Logger::commitRecord() {
  const LogStream::Buffer& operands = stream_.buffer();
  const size_t length = operands.length();
  const size_t size = detail::recordSize(length);
  char* p = record_;
  if (__builtin_expect(p != nullptr, 1)) {
    queue_->closeInPlace();
  } else {
    p = queue_->reserve(size);
    if (p == nullptr) return;  // dropped; the sink counted it
    std::memcpy(p + sizeof(detail::RecordHeader), operands.data(), length);
  }
  detail::RecordHeader header;
  header.size = static_cast<uint32_t>(size);
  header.length = static_cast<uint16_t>(length);
  header.kind = recordKind_;
  header.level = static_cast<uint8_t>(level_);
  header.key = recordKey_;
  header.time = recordTime_;
  header.site = &site_;
  std::memcpy(p, &header, sizeof header);
  queue_->commit(size);
}

namespace {

// The microsecond of a line whose time the window did not cover: reads the
// clock (renewing the window when it is TscClock's) and rebuilds the prefix
// if the second or the zone changed.
// `began`: the statement's time, if it began before its Logger was made.
__attribute__((noinline)) int refreshPrefix(Logger::ClockFunc clock, unsigned generation,
                                            const detail::StatementTime* began) {
  Timestamp now;
  if (clock == &TscClock::now && began != nullptr && TscClock::countsAreTime()) {
    now = TscClock::atCount(began->count, &t_prefix.window);
  } else if (clock == &TscClock::now && began == nullptr) {
    now = TscClock::nowAndWindow(&t_prefix.window);
  } else {
    t_prefix.window = TscClock::SecondWindow();
    now = began != nullptr ? began->time : clock();
  }
  t_prefix.prefix.update(now.secondsSinceEpoch(), generation, CurrentThread::tidString());
  return now.microSecondsInSecond();
}

}  // namespace

namespace {

// The time of a line for a statement that began at `began` (nullptr:
// now), as its header shows it: its counter (the line's order key),
// microsecond and second to *count, *micro and *second. Returns this
// thread's prefix cache, which then holds that second's prefix.
__attribute__((always_inline)) inline PrefixCache& lineTime(const detail::StatementTime* began,
                                                            uint64_t* count, int* micro,
                                                            int64_t* second) {
  // The common case reads the counter and finds it in this thread's window
  // on the prefix's second: no shared state but two read-mostly words.
  const Logger::ClockFunc clock = g_clock.load(std::memory_order_relaxed);
  const unsigned generation = g_timeZoneGeneration.load(std::memory_order_acquire);
  PrefixCache& cache = t_prefix;
  const uint64_t at = began != nullptr ? began->count : TscClock::readCounter();
  *count = at;
  int m;
  if (__builtin_expect(clock == &TscClock::now, 1) && cache.window.covers(at) &&
      generation == cache.prefix.generation) {
    m = cache.window.microAt(at);
  } else {
    m = refreshPrefix(clock, generation, began);
  }
  *micro = m;
  *second = cache.prefix.second;
  return cache;
}

// Writes the header of a line at `level` into the empty `buf`, with its
// time as lineTime gives it. Returns the header's length.
__attribute__((always_inline)) inline size_t writeLineHeader(
    LogStream::Buffer& buf, Logger::LogLevel level, const detail::StatementTime* began,
    uint64_t* count, int* micro, int64_t* second) {
  const PrefixCache& cache = lineTime(began, count, micro, second);
  return detail::writeHeader(buf, cache.prefix, *micro, level);
}

}  // namespace

void Logger::formatHeader(LogLevel level) {
  // What record() needs and the prefix cache may forget before it runs (a
  // << operand that logs may start a new second); the counter is also the
  // line's order key, should it go to a record queue as text.
  messageBegin_ = static_cast<uint32_t>(
      writeLineHeader(stream_.buffer(), level, began_, &recordKey_, &micro_, &second_));
}

namespace {

void flushWith(const detail::LoggerConfig& config) {
  if (config.flush != nullptr) {
    config.flush();
  } else {
    config.sink.flush(config.sink.sink);
  }
}

// Writes a line to a sink that takes text or to the output function; false
// if the attached sink takes records instead.
inline bool writeText(const detail::LoggerConfig& config, const char* line, size_t len) {
  const detail::SinkRef& sink = config.sink;
  if (sink.appendText != nullptr) {
    sink.appendText(sink.sink, line, len);
    return true;
  }
  if (config.output != nullptr) {
    config.output(line, len);
    return true;
  }
  return false;
}

void writeRecord(const detail::LoggerConfig& config, const LogRecord& record) {
  if (!writeText(config, record.text.data(), record.text.size())) {
    config.sink.appendRecord(config.sink.sink, record);
  }
}

}  // namespace

// writeRecord(config, record()), making the record only for a sink that
// takes records.
inline void Logger::write(const detail::LoggerConfig& config) const {
  const LogStream::Buffer& buf = stream_.buffer();
  if (!writeText(config, buf.data(), buf.length())) writeAsRecord(config.sink);
}

// Out of line: the record's stack frame stays off the paths that write text.
__attribute__((noinline)) void Logger::writeAsRecord(const detail::SinkRef& sink) const {
  sink.appendRecord(sink.sink, record());
}

// The route depends on whether the thread has context fields: resolved
// again at the next statement after each change.
LogContext::LogContext(std::initializer_list<Field> fields) : fields_(fields), outer_(t_context) {
  t_context = this;
  detail::t_contextFields += fields_.size();
  detail::forgetThreadRoute();
}

LogContext::~LogContext() {
  t_context = outer_;
  detail::t_contextFields -= fields_.size();
  detail::forgetThreadRoute();
}

void LogContext::countAdded() {
  ++detail::t_contextFields;
  detail::forgetThreadRoute();
}

const LogContext* LogContext::current() { return t_context; }

void LogContext::Field::encode() {
  // In a line of its own, far from its end: nothing is cut, so the bytes
  // are the ones any line with room to spare gets.
  LogStream s;
  s.beginField(name, text);
  s.append(value.data(), value.size());
  s.endField();
  if (s.buffer().length() <= LogStream::kMaxEncodedField) encoded = s.buffer().toString();
}

void detail::appendContext(LogStream& stream, const LogContext& innermost) {
  // Outermost first; a name an inner context also has is left to it.
  const LogContext* chain[32];
  size_t depth = 0;
  for (const LogContext* c = &innermost; c != nullptr && depth < 32; c = c->outer()) {
    chain[depth++] = c;
  }
  for (size_t i = depth; i-- > 0;) {
    for (const LogContext::Field& f : chain[i]->fields()) {
      bool shadowed = false;
      for (size_t j = i; j-- > 0 && !shadowed;) {
        for (const LogContext::Field& g : chain[j]->fields()) {
          if (g.name == f.name) {
            shadowed = true;
            break;
          }
        }
      }
      if (shadowed || stream.appendEncodedField(f.encoded)) continue;
      // Recorded (one operand: one record less), or near the line's end.
      stream.beginOneOperandField(f.name, f.text, false);
      if (f.text) {
        stream << f.value;
      } else {
        stream.append(f.value.data(), f.value.size());
      }
      stream.endOneOperandField(false);
    }
  }
}

Logger::~Logger() {
  if (savedErrno_ != 0) {
    stream_ << ": " << strerror_tl(savedErrno_) << " (errno=" << savedErrno_ << ')';
  }
  // The thread's context fields; with none, this load and compare is all.
  if (__builtin_expect(detail::t_contextFields != 0, 0)) detail::appendContext(stream_, *t_context);
  const detail::LoggerConfig& config = *config_;
  if (stream_.recording() && commitRecorded(config)) {
    // A level that flushes, and FATAL: the sink writes the record first.
    if (__builtin_expect(level_ >= config.attentionLevel, 0)) {
      if (level_ >= config.flushLevel || level_ == FATAL) flushWith(config);
      if (level_ == FATAL) std::abort();
    }
    return;
  }
  stream_.closeFields();  // no field's raw bytes left unencoded
  // Free on the common path: its inlined fast path returns a constant.
  if (detail::appendTrailer(stream_, site_.where)) detail::countTruncatedLine();
  // One compare covers the rare cases: a level that flushes, FATAL, and
  // every line while the backtrace ring is on (it may be below its level)
  // or a sink that takes records is attached.
  if (__builtin_expect(level_ >= config.attentionLevel, 0)) {
    writeRare(config);
    return;
  }
  const LogStream::Buffer& buf = stream_.buffer();
  // A line of a statement that would have been a record, had its queue not
  // been crowded (or the record not outgrown its buffer): into the sink's
  // shared buffers while the thread is in the shared mode (RecordQueue.h),
  // else into the queue, with the time it read as its key.
  if (queue_ != nullptr) {
    queue_->appendLine(buf.data(), buf.length(), recordKey_);
    return;
  }
  // Text, to the attached sink or the output function: a sink that takes
  // records sets the attention level to TRACE, so one of those is here.
  static_cast<void>(writeText(config, buf.data(), buf.length()));
}

namespace {

// Hands a crowded statement's recorded operands to its sink, which makes
// the line (RecordSink::appendCrowded); false where it leaves that to text.
bool appendCrowdedRecord(detail::RecordSink& sink, detail::RecordQueue& queue,
                         const detail::LogSite& site, Logger::LogLevel level,
                         const detail::StatementTime& began, const char* operands, size_t n) {
  detail::RecordSink::CrowdedRecord record;
  record.site = &site;
  record.level = level;
  lineTime(&began, &record.count, &record.micro, &record.second);
  record.operands = operands;
  record.length = n;
  return sink.appendCrowded(queue, record);
}

}  // namespace

bool Logger::commitCrowded(const detail::LoggerConfig& config) {
  // The time the record would have shown: when it began (startRecord).
  const detail::StatementTime began =
      began_ != nullptr ? *began_
                        : detail::StatementTime{recordKey_,
                                                recordKind_ == detail::RecordHeader::kStatementCount
                                                    ? Timestamp()
                                                    : Timestamp(recordTime_)};
  const LogStream::Buffer& operands = stream_.buffer();
  if (appendCrowdedRecord(*config.records, *queue_, site_, level_, began, operands.data(),
                          operands.length())) {
    return true;
  }
  // Text after all, with the same time (recordToText writes the header).
  const detail::StatementTime* const saved = began_;
  began_ = &began;
  stream_.stopRecording();
  began_ = saved;
  return false;
}

bool Logger::writeStatementText(const detail::LogSite& site, LogLevel level,
                                const detail::StatementTime& began, const char* operands,
                                size_t n, bool crowded) {
  // What a Logger would do with these operands, where it would make text
  // and write it as ~Logger's common path does; elsewhere it is left to one.
  if (__builtin_expect(detail::t_contextFields != 0, 0)) return false;
  const detail::LoggerConfig& config = detail::loggerConfig();
  if (level >= config.attentionLevel) {
    // A sink that takes records (its lines in another format) may make a
    // crowded record's line itself, where the line asks for nothing more
    // (no flush, no abort, no backtrace ring: config.records is set).
    if (config.records == nullptr || level >= config.flushLevel || level == FATAL) return false;
    detail::RecordQueue* queue = detail::recordQueueFor(*config.records);
    if (queue == nullptr || !(crowded || queue->crowded())) return false;
    return appendCrowdedRecord(*config.records, *queue, site, level, began, operands, n);
  }
  detail::RecordQueue* queue = nullptr;
  if (config.records != nullptr) {
    // Text only while the queue is crowded: else the statement is a record.
    queue = detail::recordQueueFor(*config.records);
    if (queue == nullptr || !(crowded || queue->crowded())) return false;
  }
  // A sink that wants recorded lines now gets one from the Logger.
  if (config.recordedLineGate != nullptr &&
      config.recordedLineGate->load(std::memory_order_relaxed)) {
    return false;
  }
  LogStream stream;
  uint64_t count;
  int micro;
  int64_t second;
  writeLineHeader(stream.buffer(), level, &began, &count, &micro, &second);
  static_cast<void>(detail::replayOperandsInline(operands, n, stream));
  stream.closeFields();
  if (detail::appendTrailer(stream, site.where)) detail::countTruncatedLine();
  const LogStream::Buffer& buf = stream.buffer();
  if (queue != nullptr) {
    queue->appendLine(buf.data(), buf.length(), count);
  } else {
    static_cast<void>(writeText(config, buf.data(), buf.length()));
  }
  return true;
}

LogRecord Logger::record() const {
  const LogStream::Buffer& buf = stream_.buffer();
  const char* data = buf.data();
  const detail::SourceLocation& where = site_.where;
  // The trailer is always whole at the end (finish); a message that did not
  // fit was cut before it.
  const size_t messageEnd = buf.length() - where.length;
  const size_t messageBegin = std::min<size_t>(messageBegin_, messageEnd);
  LogRecord r;
  r.time = Timestamp::fromUnixTime(second_, micro_);
  r.level = level_;
  r.tid = CurrentThread::tid();
  r.file = std::string_view(data + messageEnd + detail::SourceLocation::kFileOffset,
                            where.fileLength);
  r.line = where.line;
  // "func " between the level and the message.
  if (functionBegin_ != 0 && messageBegin > functionBegin_) {
    r.function = std::string_view(data + functionBegin_, messageBegin - functionBegin_ - 1);
  }
  r.message = std::string_view(data + messageBegin, messageEnd - messageBegin);
  const size_t fieldsFrom = std::max(stream_.trailingFieldsFrom(messageEnd), messageBegin);
  r.fields = std::string_view(data + fieldsFrom, messageEnd - fieldsFrom);
  r.text = buf.toStringView();
  return r;
}

void Logger::writeRare(const detail::LoggerConfig& config) {
  const bool backtrace = config.backtraceLines > 0;
  // FATAL is the highest level: a FATAL line is never below its site's.
  if (backtrace && level_ < site_.level.load(std::memory_order_relaxed)) {
    keepInBacktrace();
    return;
  }
  if (backtrace && level_ >= ERROR) writeBacktrace(config);
  write(config);
  if (level_ >= config.flushLevel || level_ == FATAL) flushWith(config);
  if (level_ == FATAL) std::abort();
}

// Kept as a record, so that a sink that takes records gets one when the
// ring is written. Out of line: its buffer stays off writeRare's frame.
__attribute__((noinline)) void Logger::keepInBacktrace() const {
  const LogRecord line = record();
  const size_t size = detail::storedSize(line);
  // A line's record is its text and a header.
  char stored[LogStream::kBufferSize + 256];
  if (__builtin_expect(size <= sizeof stored, 1)) {
    detail::storeRecord(line, stored);
    detail::backtracePush(stored, size);
  } else {
    std::string heap(size, '\0');
    detail::storeRecord(line, heap.data());
    detail::backtracePush(heap.data(), size);
  }
}

void Logger::writeBacktrace(const detail::LoggerConfig& config) {
  std::vector<std::string> kept = detail::backtraceTake();
  if (kept.empty()) return;
  // The markers carry this line's date-time, thread and level, so that they
  // read as log lines; no statement wrote them, so they have no trailer.
  // The kept lines keep their own.
  const std::string_view header(stream_.buffer().data(),
                                functionBegin_ != 0 ? functionBegin_ : messageBegin_);
  auto writeMarker = [&](const std::string& message) {
    const std::string text = std::string(header) + message + '\n';
    LogRecord marker = record();
    marker.file = std::string_view();
    marker.line = 0;
    marker.function = std::string_view();
    marker.fields = std::string_view();
    marker.message = std::string_view(text).substr(header.size(), message.size());
    marker.text = text;
    writeRecord(config, marker);
  };
  writeMarker("---- backtrace: the last " + std::to_string(kept.size()) +
              " lines below the level, oldest first ----");
  for (const std::string& stored : kept) writeRecord(config, detail::loadRecord(stored.data()));
  writeMarker("---- end of backtrace ----");
}

void Logger::setFlushLevel(LogLevel level) {
  detail::changeLoggerConfig([&](detail::LoggerConfig& c) { c.flushLevel = level; });
}

Logger::LogLevel Logger::flushLevel() { return detail::loggerConfig().flushLevel; }

void Logger::enableBacktrace(size_t lines) {
  detail::changeLoggerConfig([&](detail::LoggerConfig& c) {
    detail::backtraceResize(lines);
    c.backtraceLines = lines;
  });
}

void Logger::setOutput(OutputFunc out) {
  detail::changeLoggerConfig([&](detail::LoggerConfig& c) {
    c.output = out ? out : &detail::defaultOutput;
    detail::clearLineRoutes(&c.sink);  // lines no longer go to an attached sink
  });
}

void Logger::setFlush(FlushFunc flush) {
  detail::changeLoggerConfig([&](detail::LoggerConfig& c) {
    c.flush = flush ? flush : &detail::defaultFlush;
    c.sink.flush = nullptr;
  });
}

void Logger::flush() { flushWith(detail::loggerConfig()); }

void Logger::setClock(ClockFunc clock) {
  g_clock.store(clock ? clock : &TscClock::now, std::memory_order_relaxed);
  detail::g_routeGeneration.fetch_add(1, std::memory_order_release);
}

static_assert(detail::kStatementLevels == Logger::NUM_LOG_LEVELS,
              "a thread's route has a lane for every level");

bool detail::clockIsTheCounter() noexcept {
  return TscClock::countsAreTime() && g_clock.load(std::memory_order_relaxed) == &TscClock::now;
}

void detail::resolveThreadRoute() noexcept {
  ThreadRoute& route = t_route;
  // The open statement ends on the lane it began in (Statement::leaveLane).
  if (route.lane != nullptr && route.lane->busy()) return;
  // The number first: a change after it is seen at the next statement.
  const unsigned generation = g_routeGeneration.load(std::memory_order_acquire);
  const LoggerConfig& config = loggerConfig();
  route.lane = &g_noLane;
  int fastBelow = 0;
  // Records carry the counter as their time: only while it is the clock.
  // A LogContext's fields are appended by Logger.
  const bool counting = TscClock::countsAreTime();
  if (config.records != nullptr && t_contextFields == 0 && clockIsTheCounter()) {
    if (RecordQueue* queue = recordQueueFor(*config.records)) {
      route.lane = queue->lane();
      fastBelow = std::min(config.flushLevel, Logger::FATAL);
    }
  }
  for (int level = 0; level < kStatementLevels; ++level) {
    route.lanes[level] = level < fastBelow ? route.lane : &g_noLane;
  }
  // A counter not yet calibrated will be: look again at the next statement.
  route.generation = counting || !TscClock::counterAvailable() ? generation : 0;
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
