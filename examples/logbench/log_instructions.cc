// log_instructions: instructions per log statement, counted by callgrind
// (docs/logging.md has the figures and the command). Each row is one
// noipa function run kCalls times; its inclusive Ir / kCalls is what one
// statement costs the calling thread. Instruction counts, unlike timings, do
// not move with the load of a shared machine.
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/bin/log_instructions
//   callgrind_annotate --inclusive=yes cg.out | grep '=> .*row'
#include <cstdint>

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "MadeRecords.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/LogStream.h"
#include "muon/base/Logging.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/internal/RecordQueues.h"
#include "muon/base/JournaldSink.h"
#include "muon/base/SyslogSink.h"

namespace {

constexpr int kCalls = 100000;

void discard(const char*, size_t) {}
void noFlush() {}

// A sink that discards, for the row with two sinks (Logger::addSink).
struct DiscardingSink {
  void append(const char*, size_t) {}
  void flush() {}
};

#define MUON_ROW(name, statement)                                      \
  __attribute__((noipa)) void name(uint64_t i) { statement; }         \
  void run_##name() {                                                  \
    for (uint64_t i = 0; i < kCalls; ++i) name(i);                     \
  }

#define MESSAGE "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << ' ' << i

MUON_ROW(rowLogInfo, LOG_INFO << MESSAGE)
MUON_ROW(rowLogDebugDisabled, LOG_DEBUG << MESSAGE)
MUON_ROW(rowLogIfFalse, LOG_IF(INFO, i == ~0ull) << MESSAGE)
MUON_ROW(rowLogIfDisabled, LOG_IF(DEBUG, i != ~0ull) << MESSAGE)
MUON_ROW(rowLogEveryN1000, LOG_EVERY_N(INFO, 1000) << MESSAGE)
MUON_ROW(rowLogEveryNDisabled, LOG_EVERY_N(DEBUG, 1000) << MESSAGE)
MUON_ROW(rowLogFirstNPast, LOG_FIRST_N(INFO, 1) << MESSAGE)
MUON_ROW(rowLogEveryTSuppressed, LOG_EVERY_T(INFO, 1e6) << MESSAGE)
MUON_ROW(rowCheckPasses, CHECK(i != ~0ull) << MESSAGE)
MUON_ROW(rowCheckNePasses, CHECK_NE(i, ~0ull) << MESSAGE)
MUON_ROW(rowLogDebugDisabledWithModules, LOG_DEBUG << MESSAGE)
MUON_ROW(rowLogInfoWithModules, LOG_INFO << MESSAGE)
MUON_ROW(rowLogDebugIntoBacktrace, LOG_DEBUG << MESSAGE)
MUON_ROW(rowLogInfoWithBacktrace, LOG_INFO << MESSAGE)
MUON_ROW(rowLogInfoFlushed, LOG_INFO << MESSAGE)
MUON_ROW(rowLogInfoToSyslogSink, LOG_INFO << MESSAGE)
MUON_ROW(rowLogInfoToJournaldSink, LOG_INFO << MESSAGE)
MUON_ROW(rowLogInfoToAsyncLogging, LOG_INFO << MESSAGE)
MUON_ROW(rowLogInfoToTwoSinks, LOG_INFO << MESSAGE)
// Deferred to AsyncLogging, without and with a JournaldSink its backend
// forwards the lines to (AsyncLogging::forward).
MUON_ROW(rowLogInfoDeferred, LOG_INFO << MESSAGE)
MUON_ROW(rowLogInfoDeferredForwardedToJournald, LOG_INFO << MESSAGE)

// Fields (muon::kv) against the same values written with plain <<, on the
// text path and deferred to AsyncLogging; and a statement under an empty
// LogContext against rowLogInfo (none).
const std::string kUser = "alice";
#define THREE_FIELDS \
  "login" << muon::kv("user", kUser) << muon::kv("ms", i) << muon::kv("ratio", 0.5)
#define THREE_PLAIN "login" << " user=" << kUser << " ms=" << i << " ratio=" << 0.5
MUON_ROW(rowThreeFields, LOG_INFO << THREE_FIELDS)
MUON_ROW(rowThreePlain, LOG_INFO << THREE_PLAIN)
MUON_ROW(rowThreeFieldsToAsyncLogging, LOG_INFO << THREE_FIELDS)
MUON_ROW(rowThreePlainToAsyncLogging, LOG_INFO << THREE_PLAIN)
MUON_ROW(rowThreeFieldsDeferred, LOG_INFO << THREE_FIELDS)
MUON_ROW(rowThreePlainDeferred, LOG_INFO << THREE_PLAIN)
// A statement whose queue is crowded (its backend behind) makes its own
// line: text, and JSON straight from its operands (AsyncLogging's
// appendCrowded).
MUON_ROW(rowThreeFieldsCrowdedText, LOG_INFO << THREE_FIELDS)
MUON_ROW(rowThreeFieldsCrowdedJson, LOG_INFO << THREE_FIELDS)
MUON_ROW(rowHelloWorldCrowdedText, (void)i; LOG_INFO << "hello world")
// logbench's short statement (MuonBackend.cc), crowded: the line a producer
// makes in logbench --size short at 2 threads, where the backend is behind.
const std::string kShortExtra = " ";
MUON_ROW(rowLogbenchShortCrowdedText,
         LOG_INFO << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << kShortExtra << i)
// The two statements the peers' benchmarks (Quill's, fmtlog's) time, deferred
// to AsyncLogging as rowThreeFieldsDeferred is: the figures issue-level
// comparisons quote (docs/logging.md).
// The values are the function's parameters, as the peers' harnesses pass
// them: the row counts the statement, not the caller's arithmetic.
__attribute__((noipa)) void rowIntIntDoubleDeferred(int i, int j, double d) {
  LOG_INFO << "Logging int: " << i << ", int: " << j << ", double: " << d;
}
void run_rowIntIntDoubleDeferred() {
  for (int i = 0; i < kCalls; ++i) rowIntIntDoubleDeferred(i, i + 1, i * 0.5);
}
MUON_ROW(rowHelloWorldDeferred, (void)i; LOG_INFO << "hello world")
MUON_ROW(rowLogInfoEmptyContext, LOG_INFO << MESSAGE)

// The backend's side: AsyncLogging's formatter making the text line of one
// record, for the statements of the rows above (MadeRecords.h).
struct FormatRow {
  logbench::MadeRecords records;
  muon::detail::RecordFormatter formatter;
  muon::detail::LinePrefix prefix;
  std::unique_ptr<char[]> out;

  template <typename Operands>
  explicit FormatRow(Operands operands, muon::LineFormat format = muon::LineFormat::kText)
      : records(256, operands), formatter(format), out(new char[formatter.maxLine()]) {}
  size_t format(uint64_t i) {
    return formatter.format(records[i % records.size()], prefix, 4321, " 4321 ", out.get());
  }
};
#define MUON_FORMAT_ROW_AS(name, lineFormat, operands)                                 \
  FormatRow* name##Records;                                                           \
  __attribute__((noipa)) void name(uint64_t i) { name##Records->format(i); }         \
  void run_##name() {                                                                 \
    FormatRow row([](auto r, uint64_t i) { return r << operands; },                 \
                  lineFormat);                                                            \
    name##Records = &row;                                                             \
    for (uint64_t i = 0; i < kCalls; ++i) name(i);                                    \
  }
#define MUON_FORMAT_ROW(name, operands) MUON_FORMAT_ROW_AS(name, muon::LineFormat::kText, operands)
MUON_FORMAT_ROW(rowFormatLogInfo, MESSAGE)
MUON_FORMAT_ROW(rowFormatThreeFields, THREE_FIELDS)
MUON_FORMAT_ROW(rowFormatThreePlain, THREE_PLAIN)
// The same record as a JSON and a logfmt line: what each encoder adds to
// the text line.
MUON_FORMAT_ROW_AS(rowFormatThreeFieldsJson, muon::LineFormat::kJson, THREE_FIELDS)
MUON_FORMAT_ROW_AS(rowFormatThreeFieldsLogfmt, muon::LineFormat::kLogfmt, THREE_FIELDS)
MUON_FORMAT_ROW(rowFormatIntIntDouble,
                "Logging int: " << static_cast<int>(i) << ", int: " << static_cast<int>(i + 1)
                                << ", double: " << static_cast<double>(i) * 0.5)
MUON_FORMAT_ROW(rowFormatHelloWorld, "hello world"; (void)i)
MUON_ROW(rowLogInfoOneFieldContext, LOG_INFO << MESSAGE)

}  // namespace

// Runs `row` into a sink that queues what the calling thread hands it,
// with room for every call and no wait for it at the end.
template <typename Sink, typename Options>
void rowIntoQueuingSink(Options options, void (*row)()) {
  options.queueCapacity = kCalls + 1;
  options.flushTimeoutMs = 0;
  Sink sink(options);
  auto attached = muon::Logger::attach(sink);
  row();
}

int main() {
  using muon::Logger;
  Logger::setLogLevel(Logger::INFO);
  Logger::setOutput(&discard);
  Logger::setFlush(&noFlush);

  run_rowLogInfo();
  run_rowLogDebugDisabled();
  run_rowLogIfFalse();
  run_rowLogIfDisabled();
  run_rowLogEveryN1000();
  run_rowLogEveryNDisabled();
  run_rowLogFirstNPast();
  run_rowLogEveryTSuppressed();
  run_rowCheckPasses();
  run_rowCheckNePasses();
  run_rowThreeFields();
  run_rowThreePlain();
  {
    muon::LogContext empty{};
    run_rowLogInfoEmptyContext();
  }
  {
    muon::LogContext one{{"request_id", "7f3a"}};
    run_rowLogInfoOneFieldContext();
  }

  // Module levels for other files: this file's statements keep INFO.
  Logger::setModuleLevel("TcpConnection", Logger::TRACE);
  Logger::setModuleLevel("net/*", Logger::DEBUG);
  run_rowLogDebugDisabledWithModules();
  run_rowLogInfoWithModules();
  Logger::clearModuleLevels();

  Logger::enableBacktrace(100);
  run_rowLogDebugIntoBacktrace();
  run_rowLogInfoWithBacktrace();
  Logger::enableBacktrace(0);

  Logger::setFlushLevel(Logger::INFO);
  run_rowLogInfoFlushed();
  Logger::setFlushLevel(Logger::FATAL);

  // Only the calling thread's side of the sinks with a sender thread:
  // nobody listens at the path, and the sender waits in its back-off while
  // the records queue.
  {
    muon::SyslogOptions options;
    options.path = "/nonexistent/muon-log-instructions.sock";
    options.firstRetryMs = 60000;
    rowIntoQueuingSink<muon::SyslogSink>(options, run_rowLogInfoToSyslogSink);
  }
  {
    muon::JournaldOptions options;
    options.socketPath = "/nonexistent/muon-log-instructions-journal";
    options.retryMs = 60000;
    rowIntoQueuingSink<muon::JournaldSink>(options, run_rowLogInfoToJournaldSink);
  }

  {
    // The calling thread's side of AsyncLogging, buffer switches included;
    // the backend's writer discards (its file is created, in a directory
    // of our own).
    char dir[] = "/tmp/log_instructions.XXXXXX";
    if (::mkdtemp(dir) == nullptr) return 1;
    {
      muon::AsyncLogging::Options options;
      options.policy = muon::AsyncLogging::kBlock;
      muon::AsyncLogging log(std::string(dir) + "/row", 1L << 40, options);
      log.setWriteFunction([](int, const char*, size_t len) { return static_cast<ssize_t>(len); });
      log.start();
      auto attached = Logger::attach(log);
      run_rowLogInfoToAsyncLogging();
      run_rowThreeFieldsToAsyncLogging();
      run_rowThreePlainToAsyncLogging();
    }
    std::string command = std::string("rm -rf ") + dir;
    if (std::system(command.c_str()) != 0) return 1;
  }

  {
    // Deferred formatting only: a queue that holds every record of a row,
    // so that no statement finds it crowded (under callgrind the backend
    // cannot keep up, and statements would format their own lines).
    char dir[] = "/tmp/log_instructions.XXXXXX";
    if (::mkdtemp(dir) == nullptr) return 1;
    {
      muon::AsyncLogging::Options options;
      options.policy = muon::AsyncLogging::kBlock;
      options.threadQueueBytes = 128 * 1024 * 1024;
      muon::AsyncLogging log(std::string(dir) + "/row", 1L << 40, options);
      log.setWriteFunction([](int, const char*, size_t len) { return static_cast<ssize_t>(len); });
      log.start();
      auto attached = Logger::attach(log);
      run_rowThreeFieldsDeferred();
      log.flush();
      run_rowThreePlainDeferred();
      log.flush();
      run_rowIntIntDoubleDeferred();
      log.flush();
      run_rowHelloWorldDeferred();
      log.flush();
      run_rowLogInfoDeferred();
      log.flush();
      muon::JournaldOptions journalOptions;
      journalOptions.socketPath = "/nonexistent/muon-log-instructions-journal";
      journalOptions.retryMs = 60000;
      muon::JournaldSink journal(journalOptions);
      auto forwarded = log.forward(journal);
      run_rowLogInfoDeferredForwardedToJournald();
      log.flush();
    }
    std::string command = std::string("rm -rf ") + dir;
    if (std::system(command.c_str()) != 0) return 1;
  }

  // Crowded: an AsyncLogging with the smallest queue that never starts, so
  // that every statement of the row makes its line (into the shared
  // buffers, which hold the row's lines); its leftovers are discarded.
  for (muon::LineFormat format : {muon::LineFormat::kText, muon::LineFormat::kJson}) {
    char dir[] = "/tmp/log_instructions.XXXXXX";
    if (::mkdtemp(dir) == nullptr) return 1;
    {
      muon::AsyncLogging::Options options;
      options.policy = muon::AsyncLogging::kBlock;
      options.threadQueueBytes = muon::RecordQueues::kMinQueueBytes;
      options.files.format = format;
      muon::AsyncLogging log(std::string(dir) + "/row", 1L << 40, options);
      log.setWriteFunction([](int, const char*, size_t len) { return static_cast<ssize_t>(len); });
      auto attached = Logger::attach(log);
      for (uint64_t i = 0; i < 100000; ++i) {
        LOG_INFO << THREE_FIELDS;
        const muon::detail::RecordQueue* queue = muon::detail::t_recordQueue.queue;
        if (queue != nullptr && queue->shared()) break;
      }
      if (format == muon::LineFormat::kText) {
        run_rowThreeFieldsCrowdedText();
        run_rowHelloWorldCrowdedText();
        run_rowLogbenchShortCrowdedText();
      } else {
        run_rowThreeFieldsCrowdedJson();
      }
    }
    std::string command = std::string("rm -rf ") + dir;
    if (std::system(command.c_str()) != 0) return 1;
  }

  {
    // Two sinks at once: the line formatted once and handed to each.
    DiscardingSink first;
    DiscardingSink second;
    auto toFirst = Logger::addSink(first);
    auto toSecond = Logger::addSink(second);
    run_rowLogInfoToTwoSinks();
  }

  run_rowFormatLogInfo();
  run_rowFormatThreeFields();
  run_rowFormatThreePlain();
  run_rowFormatThreeFieldsJson();
  run_rowFormatThreeFieldsLogfmt();
  run_rowFormatIntIntDouble();
  run_rowFormatHelloWorld();

  Logger::setOutput(nullptr);
  Logger::setFlush(nullptr);
  return 0;
}
