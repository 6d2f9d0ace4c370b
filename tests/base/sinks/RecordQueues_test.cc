// Deferred formatting end to end: statements attached to AsyncLogging write
// records into their threads' queues (RecordQueues.h) and the backend
// formats them; the lines must be the ones a statement formats itself.
#include "muon/base/internal/RecordQueues.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "EveryStatement.h"
#include "LineCapture.h"
#include "OutputCapture.h"
#include "TempDir.h"
#include "ThreadOrder.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/base/SpoolRecovery.h"
#include "muon/base/TimeZone.h"
#include "muon/base/TscClock.h"

using muon::AsyncLogging;
using muon::Logger;
using muon::RecordQueues;
using muon::test::readLines;
using muon::test::TempDir;

namespace {

muon::Timestamp fixedClock() { return muon::Timestamp(1764115200LL * 1000000 + 123456); }

std::vector<std::string> withNewlines(std::vector<std::string> lines) {
  for (std::string& l : lines) l += '\n';
  return lines;
}

// Every kind of statement formatted by the statements themselves (the
// fixed clock set), after a first run, so that the rate limit's counts
// are the same in the run compared with it.
std::vector<std::string> linesStatementsFormatThemselves() {
  muon::test::linesWrittenToOutput(muon::test::logEveryKindOfStatement);
  return muon::test::linesWrittenToOutput(muon::test::logEveryKindOfStatement);
}

class RecordQueuesTest : public ::testing::Test {
 protected:
  void SetUp() override { Logger::setLogLevel(Logger::TRACE); }
  void TearDown() override {
    Logger::setLogLevel(Logger::INFO);
    Logger::setClock(nullptr);
    Logger::setOutput(nullptr);
  }
  TempDir dir_;
};

TEST_F(RecordQueuesTest, DeferredLinesAreTheLinesAStatementFormatsItself) {
  Logger::setClock(&fixedClock);
  const std::vector<std::string> expected = linesStatementsFormatThemselves();

  {
    AsyncLogging log(dir_.file("deferred"), 1L << 30);
    ASSERT_NE(log.recordSink(), nullptr);
    auto attached = Logger::attach(log);
    log.start();
    muon::test::logEveryKindOfStatement();
  }
  ASSERT_EQ(dir_.files().size(), 1u);
  const std::vector<std::string> deferred = withNewlines(readLines(dir_.files()[0]));
  ASSERT_EQ(deferred.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(deferred[i], expected[i]) << "line " << i;
}

TEST_F(RecordQueuesTest, TheCallerFormatsNoDateWhileItsLinesAreDeferred) {
  AsyncLogging log(dir_.file("caller"), 1L << 30);
  auto attached = Logger::attach(log);
  log.start();
  LOG_INFO << "first";  // makes this thread's queue
  const uint64_t before = muon::detail::dateTimeFormatsInThisThread();
  for (int i = 0; i < 100; ++i) {
    LOG_INFO << "line " << i;
    // A new second for the caller's own date cache each time.
    if (i % 10 == 0) Logger::setTimeZone(Logger::timeZone());
  }
  EXPECT_EQ(muon::detail::dateTimeFormatsInThisThread(), before);
}

// With a second sink beside it, an AsyncLogging defers nothing: each
// statement formats its line once and hands it to both (the text path), in
// either mode; the lines are the same as ever.
TEST_F(RecordQueuesTest, WithTwoSinksTheStatementFormatsTheLinesBothGet) {
  Logger::setClock(&fixedClock);
  const std::vector<std::string> expected = linesStatementsFormatThemselves();

  for (bool crashSafe : {false, true}) {
    TempDir dir;
    muon::test::LineCapture second;
    {
      AsyncLogging::Options options;
      options.crashSafe = crashSafe;
      AsyncLogging log(dir.file("two"), 1L << 30, options);
      auto toLog = Logger::addSink(log);
      auto toSecond = Logger::addSink(second);
      log.start();
      muon::test::logEveryKindOfStatement();
    }
    ASSERT_EQ(dir.files().size(), 1u);
    const std::vector<std::string> written = withNewlines(readLines(dir.files()[0]));
    ASSERT_EQ(written.size(), expected.size()) << "crashSafe " << crashSafe;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(written[i], expected[i]) << "line " << i << " crashSafe " << crashSafe;
    }
    EXPECT_EQ(second.lines(), expected) << "crashSafe " << crashSafe;
  }
}

// The caller formats its lines while a second sink is attached, and defers
// again once the AsyncLogging is the one sink left.
TEST_F(RecordQueuesTest, DeferralStopsWithASecondSinkAndResumesWhenItEnds) {
  AsyncLogging log(dir_.file("resumes"), 1L << 30);
  muon::test::LineCapture second;
  auto toLog = Logger::addSink(log);
  log.start();
  LOG_INFO << "first";  // makes this thread's queue
  auto logInNewSeconds = [] {
    for (int i = 0; i < 10; ++i) {
      LOG_INFO << "line " << i;
      // A new second for the caller's own date cache each time.
      Logger::setTimeZone(Logger::timeZone());
    }
  };
  uint64_t before = muon::detail::dateTimeFormatsInThisThread();
  logInNewSeconds();
  EXPECT_EQ(muon::detail::dateTimeFormatsInThisThread(), before);

  auto toSecond = Logger::addSink(second);
  before = muon::detail::dateTimeFormatsInThisThread();
  logInNewSeconds();
  EXPECT_EQ(muon::detail::dateTimeFormatsInThisThread(), before + 10);
  EXPECT_EQ(second.size(), 10u);

  toSecond.detach();
  before = muon::detail::dateTimeFormatsInThisThread();
  logInNewSeconds();
  EXPECT_EQ(muon::detail::dateTimeFormatsInThisThread(), before);
  Logger::flush();
  ASSERT_EQ(dir_.files().size(), 1u);
  EXPECT_EQ(readLines(dir_.files()[0]).size(), 31u);
}

// Crash-safe mode defers differently: a statement formats its head and
// records its operands after it (a recorded line), which goes into the
// spool as it is; the backend formats it. The lines are the same.
TEST_F(RecordQueuesTest, CrashSafeLinesAreRecordedInTheSpoolAndWrittenAsAStatementFormatsThem) {
  Logger::setClock(&fixedClock);
  const std::vector<std::string> expected = linesStatementsFormatThemselves();

  size_t recorded = 0;
  {
    AsyncLogging::Options options;
    options.crashSafe = true;
    AsyncLogging log(dir_.file("crash"), 1L << 30, options);
    ASSERT_TRUE(log.stats().crashSafe);
    EXPECT_EQ(log.recordSink(), nullptr);
    ASSERT_NE(log.recordedLineGate(), nullptr);
    auto attached = Logger::attach(log);
    // Not started: the lines wait in the spool, where they are counted.
    muon::test::logEveryKindOfStatement();
    const std::string spool = muon::test::readFile(log.spoolPath());
    muon::SpoolContents contents;
    std::string error;
    ASSERT_TRUE(muon::readSpool(spool.data(), spool.size(), &contents, &error)) << error;
    for (const auto& b : contents.buffers) {
      for (const auto& r : b.lines) recorded += r.recorded;
    }
  }
  ASSERT_EQ(dir_.files().size(), 1u);
  const std::vector<std::string> written = withNewlines(readLines(dir_.files()[0]));
  // Every statement but those whose operands are long (over a kilobyte),
  // outgrew the buffer or left no room for the trailer (text, then).
  EXPECT_GE(recorded, 12u);
  ASSERT_EQ(written.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(written[i], expected[i]) << "line " << i;
}

// A crash-safe statement with over a kilobyte of operands (a long string,
// mostly) formats its own line: deferring it would save its caller little
// and cost the backend a second pass.
TEST_F(RecordQueuesTest, CrashSafeStatementsWithLongOperandsFormatTheirOwnLines) {
  AsyncLogging::Options options;
  options.crashSafe = true;
  AsyncLogging log(dir_.file("long"), 1L << 30, options);
  ASSERT_TRUE(log.stats().crashSafe);
  auto attached = Logger::attach(log);
  LOG_INFO << "short " << 1;
  LOG_INFO << "long " << std::string(1100, 'z');
  LOG_INFO << "fits " << std::string(900, 'z');
  const std::string spool = muon::test::readFile(log.spoolPath());
  muon::SpoolContents contents;
  std::string error;
  ASSERT_TRUE(muon::readSpool(spool.data(), spool.size(), &contents, &error)) << error;
  ASSERT_EQ(contents.buffers.size(), 1u);
  const auto& lines = contents.buffers[0].lines;
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[0].recorded);
  EXPECT_FALSE(lines[1].recorded);
  EXPECT_TRUE(lines[2].recorded);
}

// While a full buffer waits for the backend (or is being written), the
// backend is behind: crash-safe statements then format their own lines, as
// the text path does, and record again once it has caught up.
TEST_F(RecordQueuesTest, CrashSafeStatementsFormatTheirOwnLinesWhileAFullBufferWaits) {
  AsyncLogging::Options options;
  options.crashSafe = true;
  options.policy = AsyncLogging::kBlock;
  constexpr int kLines = 60000;  // more than a 4 MiB buffer holds
  {
    AsyncLogging log(dir_.file("gate"), 1L << 30, options);
    ASSERT_TRUE(log.stats().crashSafe);
    const std::atomic<bool>* gate = log.recordedLineGate();
    ASSERT_NE(gate, nullptr);
    EXPECT_TRUE(gate->load());
    auto attached = Logger::attach(log);
    // Not started: the first full buffer stays queued.
    for (int i = 0; i < kLines; ++i) LOG_INFO << "n=" << i;
    EXPECT_FALSE(gate->load());
    const std::string spool = muon::test::readFile(log.spoolPath());
    muon::SpoolContents contents;
    std::string error;
    ASSERT_TRUE(muon::readSpool(spool.data(), spool.size(), &contents, &error)) << error;
    ASSERT_EQ(contents.buffers.size(), 2u);
    size_t recorded[2] = {0, 0};
    for (size_t b = 0; b < 2; ++b) {
      for (const auto& r : contents.buffers[b].lines) recorded[b] += r.recorded;
    }
    EXPECT_EQ(recorded[0], contents.buffers[0].lines.size());  // all recorded
    // All text but the line whose statement began before the buffer filled.
    EXPECT_GT(contents.buffers[1].lines.size(), 1000u);
    EXPECT_LE(recorded[1], 1u);
    log.start();
    log.flush();
    EXPECT_TRUE(gate->load());
    LOG_INFO << "n=" << kLines;
    log.flush();
  }
  ASSERT_EQ(dir_.files().size(), 1u);
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kLines + 1));
  for (int i = 0; i <= kLines; ++i) {
    ASSERT_NE(lines[i].find(" n=" + std::to_string(i) + " - "), std::string::npos) << lines[i];
  }
}

// Parses "YYYYMMDD HH:MM:SS.uuuuuuZ" at the start of a UTC line.
int64_t lineMicros(const std::string& line) {
  struct tm tm = {};
  tm.tm_year = std::stoi(line.substr(0, 4)) - 1900;
  tm.tm_mon = std::stoi(line.substr(4, 2)) - 1;
  tm.tm_mday = std::stoi(line.substr(6, 2));
  tm.tm_hour = std::stoi(line.substr(9, 2));
  tm.tm_min = std::stoi(line.substr(12, 2));
  tm.tm_sec = std::stoi(line.substr(15, 2));
  return static_cast<int64_t>(::timegm(&tm)) * 1000000 + std::stoi(line.substr(18, 6));
}

// Whether the counter is the clock, past its warm-up where it is available
// (a bounded wait: the counter is known to come): statements are records
// only then; elsewhere, and under MUON_TSC=0, each goes through a Logger.
bool pastTheClocksWarmUp() {
  if (muon::TscClock::counterAvailable()) {
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(2 * muon::TscClock::kWarmupMs);
    while (std::chrono::steady_clock::now() < end) muon::TscClock::now();
  }
  return muon::TscClock::countsAreTime();
}

// Where the counter is available (see TscClock::counterAvailable), records
// carry counter readings that the backend converts; elsewhere, and under
// MUON_TSC=0 (the test's syscallclock run), they carry microseconds. Either
// way each line carries the wall-clock time of its statement.
TEST_F(RecordQueuesTest, LinesCarryTheWallClockTimeOfTheirStatement) {
  ASSERT_EQ(pastTheClocksWarmUp(), muon::TscClock::counterAvailable());
  std::vector<int64_t> before, after;
  {
    AsyncLogging log(dir_.file("time"), 1L << 30);
    auto attached = Logger::attach(log);
    log.start();
    for (int i = 0; i < 20; ++i) {
      before.push_back(muon::Timestamp::now().microSecondsSinceEpoch());
      LOG_INFO << "at " << i;
      after.push_back(muon::Timestamp::now().microSecondsSinceEpoch());
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  }
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), 20u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t t = lineMicros(lines[i]);
    // TscClock keeps within a few microseconds of CLOCK_REALTIME.
    EXPECT_GE(t, before[i] - 50) << lines[i];
    EXPECT_LE(t, after[i] + 50) << lines[i];
  }
}


TEST_F(RecordQueuesTest, SmallQueuesUnderBlockLoseNothingAndKeepEachThreadsOrder) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50000;
  AsyncLogging::Stats stats;
  std::atomic<int> wentShared{0};
  {
    AsyncLogging::Options options;
    options.policy = AsyncLogging::kBlock;
    options.threadQueueBytes = RecordQueues::kMinQueueBytes;
    AsyncLogging log(dir_.file("block"), 1L << 30, options);
    // A writer slower than the producers: the queues crowd, and the
    // threads take turns between their queues and the shared buffers.
    log.setWriteFunction([](int fd, const char* data, size_t len) -> ssize_t {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      return ::write(fd, data, len);
    });
    auto attached = Logger::attach(log);
    log.start();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &wentShared] {
        bool shared = false;
        for (int i = 0; i < kPerThread; ++i) {
          LOG_INFO << 't' << t << ' ' << i;
          shared = shared || muon::detail::t_recordQueue.queue->shared();
        }
        wentShared += shared;
      });
    }
    for (auto& th : threads) th.join();
    log.stop();
    stats = log.stats();
  }
  EXPECT_EQ(stats.messagesDropped, 0u);
  EXPECT_GT(wentShared.load(), 0) << "no queue crowded: the test tests nothing";
  muon::test::expectPerThreadOrder(readLines(dir_.files()[0]), kThreads, kPerThread);
}

// kBlock, and the smallest thread queues: a thread's queue crowds after a
// few hundred statements while the backend is not started.
AsyncLogging::Options smallQueuesThatBlock() {
  AsyncLogging::Options options;
  options.policy = AsyncLogging::kBlock;
  options.threadQueueBytes = RecordQueues::kMinQueueBytes;
  return options;
}

// A thread whose queue crowds (the backend behind: here not started) puts
// its lines in the shared buffers, after the records in its queue, and
// comes back to its queue once they are written; its own append()s follow
// the same way. The file has them all in the order they were logged.
TEST_F(RecordQueuesTest, AThreadBehindItsBackendUsesTheSharedBuffersAndKeepsItsOrder) {
  int n = 0;
  {
    AsyncLogging log(dir_.file("shared"), 1L << 30, smallQueuesThatBlock());
    auto attached = Logger::attach(log);
    LOG_INFO << "n=" << n++;
    muon::detail::RecordQueue* queue = muon::detail::t_recordQueue.queue;
    ASSERT_NE(queue, nullptr);
    while (!queue->shared() && n < 100000) LOG_INFO << "n=" << n++;
    ASSERT_TRUE(queue->shared()) << "the queue never crowded";
    for (int i = 0; i < 1000; ++i) {
      LOG_INFO << "n=" << n++;
      const std::string line = "appended n=" + std::to_string(n++) + " - \n";
      log.append(line.data(), line.size());
    }
    EXPECT_TRUE(queue->shared());
    log.start();
    log.flush();
    LOG_INFO << "n=" << n++;  // its lines are written: back to the queue
    EXPECT_FALSE(queue->shared());
    for (int i = 0; i < 1000; ++i) LOG_INFO << "n=" << n++;
  }
  ASSERT_EQ(dir_.files().size(), 1u);
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ASSERT_NE(lines[i].find("n=" + std::to_string(i) + " - "), std::string::npos) << lines[i];
  }
}

// While its queue is crowded, and in the shared mode, a statement still
// records in place, at its ring's write position (it takes no slot of the
// thread's), and makes its line from the record there when it ends: in the
// shared mode the ring gets no record of it, and the file has every line
// in order. Only the statement that first finds the queue crowded begins
// out of line.
TEST_F(RecordQueuesTest, AStatementInTheSharedModeRecordsInPlaceAndMakesItsLineThere) {
  if (!pastTheClocksWarmUp()) {
    GTEST_SKIP() << "no invariant counter here (or MUON_TSC=0): no statement records in place";
  }
  int n = 0;
  {
    AsyncLogging log(dir_.file("inplace"), 1L << 30, smallQueuesThatBlock());
    auto attached = Logger::attach(log);
    LOG_INFO << "n=" << n++ << " slots=" << muon::detail::statementSlotsInUse();
    muon::detail::RecordQueue* queue = muon::detail::t_recordQueue.queue;
    ASSERT_NE(queue, nullptr);
    while (!queue->shared() && n < 100000) {
      LOG_INFO << "n=" << n++ << " slots=" << muon::detail::statementSlotsInUse();
    }
    ASSERT_TRUE(queue->shared()) << "the queue never crowded";
    const uint64_t committed = queue->committed();
    for (int i = 0; i < 100; ++i) {
      LOG_INFO << "n=" << n++ << " slots=" << muon::detail::statementSlotsInUse();
    }
    EXPECT_TRUE(queue->shared());
    EXPECT_EQ(queue->committed(), committed) << "a statement of the shared mode left a record";
    log.start();
  }
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    // The operand is evaluated after the statement began, in place or not.
    ASSERT_NE(lines[i].find("n=" + std::to_string(i) + " slots="), std::string::npos) << lines[i];
  }
  // The statements that began once the thread was shared, the last ones.
  for (int i = n - 100; i < n; ++i) {
    EXPECT_NE(lines[i].find(" slots=0 - "), std::string::npos) << "not in place: " << lines[i];
  }
  const auto outOfLine = std::count_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find(" slots=0 - ") == std::string::npos;
  });
  EXPECT_EQ(outOfLine, 1) << "statements of a crowded queue began out of line";
}

// Lines longer than a record holds: a thread's own append() of one goes to
// the shared buffers (and takes the thread to the shared mode). With
// `tag`, so that the file tells them apart.
constexpr size_t kLongLine = 5000;
std::string longLine(const std::string& tag) {
  return tag + ' ' + std::string(kLongLine - tag.size() - 2, 'x') + '\n';
}
// The long lines that fill one shared buffer.
constexpr size_t kLongLinesPerBuffer = AsyncLogging::kBufferSize / kLongLine;

// A thread leaves the shared mode behind a hold only when its buffer can be
// sealed without breaking the pending bound: at kMaxPendingBuffers waiting,
// a seal would drop all but two of them (kDrop), or take a buffer past the
// most there may be (kBlock). It stays shared instead, and nothing is lost.
TEST_F(RecordQueuesTest, AThreadStaysSharedRatherThanSealABufferPastThePendingBound) {
  AsyncLogging log(dir_.file("bound"), 1L << 40, 3, AsyncLogging::kDrop);
  auto attached = Logger::attach(log);
  LOG_INFO << "first";  // the thread's queue
  muon::detail::RecordQueue* queue = muon::detail::t_recordQueue.queue;
  ASSERT_NE(queue, nullptr);
  const std::string line = longLine("shared");
  // kMaxPendingBuffers full buffers wait (no backend yet), and the current
  // one holds the thread's last line.
  for (size_t i = 0; i < AsyncLogging::kMaxPendingBuffers * kLongLinesPerBuffer + 1; ++i) {
    log.append(line.data(), line.size());
  }
  ASSERT_TRUE(queue->shared());
  ASSERT_EQ(log.stats().messagesDropped, 0u);
  LOG_INFO << "after";  // its ring is empty: it would leave, behind a seal
  EXPECT_TRUE(queue->shared());
  EXPECT_EQ(log.stats().messagesDropped, 0u);
  log.start();
  log.stop();
  // (The backend's own first retire passes the bound: kDrop drops then,
  // and reports it in a line of its own.)
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  const auto reports = std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind("Dropped log messages", 0) == 0;
  });
  EXPECT_EQ(lines.size() - static_cast<size_t>(reports) + log.stats().messagesDropped,
            AsyncLogging::kMaxPendingBuffers * kLongLinesPerBuffer + 3);
}

// Records held behind a shared buffer that was dropped (kDrop, the pending
// bound passed after the seal) are written before any later buffer: a
// dropped buffer counts as written once the buffers after it come up.
TEST_F(RecordQueuesTest, RecordsHeldBehindADroppedBufferAreWrittenBeforeTheThreadsLaterLines) {
  AsyncLogging log(dir_.file("dropped"), 1L << 40, 3, AsyncLogging::kDrop);
  auto attached = Logger::attach(log);
  LOG_INFO << "r0";
  muon::detail::RecordQueue* queue = muon::detail::t_recordQueue.queue;
  ASSERT_NE(queue, nullptr);
  // Two full buffers wait, and the current one holds the thread's last line.
  const std::string shared = longLine("shared");
  for (size_t i = 0; i < 2 * kLongLinesPerBuffer + 1; ++i) log.append(shared.data(), shared.size());
  ASSERT_TRUE(queue->shared());
  LOG_INFO << "r1";  // leaves behind a hold on that buffer, sealed third in line
  ASSERT_FALSE(queue->shared());
  // Another thread, without a queue, passes the pending bound by one (3
  // waiting, 23 more): all but the first two buffers are dropped, the
  // sealed one among them, and its last line starts the buffer that comes
  // up next.
  std::thread other([&log] {
    const std::string line = longLine("other");
    for (size_t i = 0; i < (AsyncLogging::kMaxPendingBuffers - 2) * kLongLinesPerBuffer + 1; ++i) {
      log.append(line.data(), line.size());
    }
  });
  other.join();
  ASSERT_GT(log.stats().messagesDropped, 0u);
  const std::string last = longLine("last");
  log.append(last.data(), last.size());  // back to the shared buffers, after the dropped ones
  log.start();
  log.stop();
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  auto at = [&lines](const std::string& prefix) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find(prefix) != std::string::npos) return static_cast<long>(i);
    }
    return -1L;
  };
  ASSERT_GE(at(" r1 - "), 0);
  ASSERT_GE(at("last x"), 0);
  EXPECT_LT(at(" r0 - "), at(" r1 - "));
  EXPECT_LT(at(" r1 - "), at("last x")) << "a line written before the record logged ahead of it";
}

// An operand that appends a line too long for a record to the sink: the
// thread goes to the shared mode in the middle of a statement.
struct AppendsALongLine {
  AsyncLogging* log;
};
muon::LogStream& operator<<(muon::LogStream& s, const AppendsALongLine& a) {
  const std::string line = longLine("nested");
  a.log->append(line.data(), line.size());
  return s << "operand";
}

// A statement whose operand took the thread to the shared mode ends there
// too, after the line that did: its record, committed to the queue, was
// written first (the backend drains the queues before it writes the
// shared buffers).
TEST_F(RecordQueuesTest, AStatementWhoseOperandWentSharedIsWrittenAfterThatLine) {
  AsyncLogging log(dir_.file("nested"), 1L << 40, 3, AsyncLogging::kBlock);
  auto attached = Logger::attach(log);
  LOG_INFO << "first";
  LOG_INFO << "outer " << AppendsALongLine{&log};
  log.start();
  log.stop();
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("nested x"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("outer operand - "), std::string::npos) << lines[2];
}

// A sink that never drains, whose consumer was waiting for work (or busy)
// when woken.
class UndrainedSink : public muon::detail::RecordSink {
 public:
  explicit UndrainedSink(bool consumerWaiting) : consumerWaiting_(consumerWaiting) {}
  muon::detail::RecordQueue* queueForThisThread() override { return nullptr; }
  bool wake() override {
    ++wakes;
    return consumerWaiting_;
  }
  bool waitForRoom(muon::detail::RecordQueue&) override { return false; }
  uint64_t appendShared(const char*, size_t) override { return 1; }
  int wakes = 0;

 private:
  const bool consumerWaiting_;
};

// Commits 64-byte records, as a statement does (tryReserve, and crowded()
// when there is no room), to `queue`, whose consumer never drains, until
// the queue is crowded. Returns the bytes in the ring then.
size_t usedWhenCrowded(muon::detail::RecordQueue& queue) {
  constexpr size_t kSize = 64;
  for (;;) {
    char* p = queue.tryReserve(kSize);
    if (p == nullptr) {
      if (queue.crowded()) break;
      p = queue.tryReserve(kSize);
      if (p == nullptr) return 0;  // not crowded, yet no room: the test fails
    }
    const uint32_t size = kSize;
    std::memcpy(p, &size, sizeof size);
    queue.commit(kSize);
  }
  return queue.capacity() - queue.producerFree();
}

// Past a quarter full the consumer is woken. One that was busy is not
// keeping up: the thread formats its own lines from then on, into the ring
// (not yet the shared mode). One that was only waiting for work catches up
// soon: the thread records on up to half full (going to text at once left
// a thread that logs steadily formatting its own lines for good).
// A queue of the smallest size, crowded as above, its consumer waiting for
// work (or busy) when woken: one wake, crowded within a record of `limit`
// bytes, and its thread not in the shared mode.
void expectCrowdedAt(bool consumerWaiting, size_t limit) {
  UndrainedSink sink(consumerWaiting);
  muon::detail::RecordQueue queue(RecordQueues::kMinQueueBytes, 1, "    1 ");
  queue.setSink(&sink);
  const size_t used = usedWhenCrowded(queue);
  EXPECT_EQ(sink.wakes, 1);
  EXPECT_GT(used, limit - muon::detail::RecordQueue::kMaxRecord);
  EXPECT_LE(used, limit);
  EXPECT_FALSE(queue.shared());
}

TEST(RecordQueueTest, AWokenIdleConsumerLetsTheThreadRecordUpToHalfFull) {
  expectCrowdedAt(true, RecordQueues::kMinQueueBytes / 2);
}

TEST(RecordQueueTest, AWokenBusyConsumerHasTheThreadFormatItsLinesFromAQuarter) {
  expectCrowdedAt(false, RecordQueues::kMinQueueBytes / 4);
}

// The lines a crowded thread formats go into its ring, in order with its
// records, while the ring has room for them: the consumer copies them,
// and formats the records before them meanwhile, and the thread takes up
// records again as soon as it has caught up. Only a quarter further on
// (the consumer cannot keep up even with copying) do they go to the
// shared buffers.
TEST(RecordQueueTest, ACrowdedThreadsLinesGoToTheSharedBuffersOnlyAQuarterFurtherOn) {
  UndrainedSink sink(false);
  muon::detail::RecordQueue queue(RecordQueues::kMinQueueBytes, 1, "    1 ");
  queue.setSink(&sink);
  ASSERT_GT(usedWhenCrowded(queue), 0u);
  const char line[] = "a line its statement formatted\n";
  uint64_t lines = 0;
  while (queue.crowded() && !queue.shared() && lines < RecordQueues::kMinQueueBytes) {
    queue.appendLine(line, sizeof line - 1, 0);
    ++lines;
  }
  ASSERT_TRUE(queue.shared()) << "the thread never went to the shared buffers";
  const size_t used = queue.capacity() - queue.producerFree();
  EXPECT_GT(used, RecordQueues::kMinQueueBytes / 2 - muon::detail::RecordQueue::kMaxRecord);
  EXPECT_LE(used, RecordQueues::kMinQueueBytes / 2);
  EXPECT_EQ(queue.committed(), used) << "the lines before went into the ring";
}

// A sink whose shared buffers the test says are written, for holds.
class HoldingSink : public UndrainedSink {
 public:
  HoldingSink() : UndrainedSink(false) {}
  bool sealShared(uint64_t sequence) override {
    sealed = sequence;
    return true;
  }
  void writeThrough(uint64_t sequence) { setWrittenThrough(sequence); }
  uint64_t sealed = 0;
};

// A thread in the shared mode comes back to its ring once the consumer
// has caught up with it, though its lines in the shared buffers are not
// written yet (it always has one in the buffer being filled): the buffer
// is sealed, and its records from then on are held until the buffer is
// written. One hold at a time: until then it does not leave the shared
// mode again behind another.
TEST(RecordQueueTest, AThreadLeavesTheSharedModeBehindAHoldUntilItsLinesAreWritten) {
  HoldingSink sink;
  std::string written;
  RecordQueues queues{&sink, RecordQueues::kMinQueueBytes,
                      [&](const char* p, size_t n) { written.append(p, n); }};
  muon::detail::RecordQueue* queue = queues.queueForThisThread();
  ASSERT_NE(queue, nullptr);
  const std::string before = "recorded before\n";
  queue->appendLine(before.data(), before.size(), 1);
  // A line too long for a record takes the thread to the shared buffers
  // (UndrainedSink: into buffer 1).
  const std::string longLine(muon::detail::RecordQueue::kMaxText + 1, 'x');
  queue->appendLine(longLine.data(), longLine.size(), 2);
  ASSERT_TRUE(queue->shared());
  EXPECT_EQ(queues.drain([] {}), 1u);  // the consumer catches up
  EXPECT_FALSE(queue->crowded());
  EXPECT_FALSE(queue->shared());
  EXPECT_EQ(sink.sealed, 1u);
  const std::string after = "recorded after\n";
  queue->appendLine(after.data(), after.size(), 3);
  EXPECT_EQ(queues.drain([] {}), 0u) << "a record passed its hold";
  EXPECT_EQ(queues.heldFor(), 1u);
  // Back to the shared buffers: no second hold while the first stands.
  queue->appendLine(longLine.data(), longLine.size(), 4);
  EXPECT_TRUE(queue->crowded());
  EXPECT_TRUE(queue->shared());
  sink.writeThrough(1);
  EXPECT_EQ(queues.drain([] {}), 1u);
  EXPECT_EQ(queues.heldFor(), 0u);
  queues.writeLines();
  EXPECT_EQ(written, before + after);
}

// One thread's queue of the smallest size, drained only when a test says,
// its lines written into `written`.
class RecordQueueRingTest : public ::testing::Test {
 protected:
  UndrainedSink sink{true};
  std::string written;
  RecordQueues queues{&sink, RecordQueues::kMinQueueBytes,
                      [this](const char* p, size_t n) { written.append(p, n); }};
  muon::detail::RecordQueue* queue = queues.queueForThisThread();
};

// A record that must wrap is reserved in two steps: the wrap marker is
// published first, the record after it when it is committed. A drain that
// comes between must stop at the marker, not read the ring's start, which
// still holds the last lap's records (it did, and went on past the end it
// took, for good: the backend spun and stop() never returned).
TEST_F(RecordQueueRingTest, ADrainThatMeetsAWrapMarkerLastStopsThere) {
  ASSERT_NE(queue, nullptr);
  int lines = 0;
  auto append = [&] {
    char text[128];
    const int n = std::snprintf(text, sizeof text, "%0100d\n", lines++);  // all as long
    queue->appendLine(text, static_cast<size_t>(n), 0);
  };
  const size_t size = muon::detail::recordSize(101);
  const size_t capacity = queue->capacity();
  auto at = [&] { return static_cast<size_t>(queue->committed()) & (capacity - 1); };
  // A lap and a bit, drained as it goes, up to where one more record fits
  // and the one after it must wrap.
  while (lines < 1000 || at() + 2 * size <= capacity || at() + size > capacity) {
    append();
    queues.drain([] {});
  }
  append();  // not drained: the drain below formats it, then meets the marker
  char* record = queue->reserve(size);  // publishes the marker
  ASSERT_NE(record, nullptr);
  std::atomic<bool> drained{false};
  std::thread consumer([&] {
    queues.drain([] {});
    drained = true;
  });
  for (int i = 0; i < 1000 && !drained; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!drained) {
    ADD_FAILURE() << "the drain did not stop at the wrap marker";
    std::_Exit(1);  // the consumer spins for good
  }
  consumer.join();
  // The record, committed now, is the next line written.
  const std::string last = "the record after the wrap\n";
  muon::detail::RecordHeader header{};
  header.size = static_cast<uint32_t>(muon::detail::recordSize(last.size()));
  header.length = static_cast<uint16_t>(last.size());
  header.kind = muon::detail::RecordHeader::kText;
  std::memcpy(record, &header, sizeof header);
  std::memcpy(record + sizeof header, last.data(), last.size());
  queue->commit(header.size);
  queues.drain([] {});
  queues.writeLines();
  ASSERT_GE(written.size(), last.size());
  EXPECT_EQ(written.substr(written.size() - last.size()), last);
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), lines + 1);
}

// Commits a line as a text record the way a statement commits its record
// in place (Statement.h): at the lane's write position, published with one
// store of its end, nothing else told. False if the lane has no room.
bool commitInPlace(muon::detail::RecordQueue* queue, const char* text, size_t len) {
  muon::detail::RecordLane* lane = queue->lane();
  char* at = lane->write;
  if (at > lane->limit) return false;
  muon::detail::RecordHeader header{};
  header.size = static_cast<uint32_t>(muon::detail::recordSize(len));
  header.length = static_cast<uint16_t>(len);
  header.kind = muon::detail::RecordHeader::kText;
  std::memcpy(at, &header, sizeof header);
  std::memcpy(at + sizeof header, text, len);
  lane->write = at + header.size;
  lane->published.store(at + header.size, std::memory_order_release);
  return true;
}

// Records of 128 bytes, a lap's size divides by: each lap's last record ends
// exactly at the ring's end, and the next lap's first begins at its start.
// The producer publishes where its records end as a place in the ring, by
// its slow paths and in place; both sides' positions must still count every
// byte, lap after lap, and every line must come out once, in order.
TEST_F(RecordQueueRingTest, RecordsEndingAtTheRingsEndAreFollowedByALapFromItsStart) {
  ASSERT_NE(queue, nullptr);
  constexpr size_t kLine = 96;  // with the header, 128 bytes
  ASSERT_EQ(muon::detail::recordSize(kLine), 128u);
  const size_t perLap = queue->capacity() / 128;
  const size_t lines = perLap * 5 / 2;
  std::string expected;
  for (size_t i = 0; i < lines; ++i) {
    char text[kLine + 1];
    std::snprintf(text, sizeof text, "%095zu\n", i);
    if (i % 3 == 0 || !commitInPlace(queue, text, kLine)) queue->appendLine(text, kLine, 0);
    expected.append(text, kLine);
    ASSERT_EQ(queue->committed(), (i + 1) * 128) << "after line " << i;
    if (i % 7 == 6) queues.drain([] {});
  }
  queues.drain([] {});
  queues.writeLines();
  EXPECT_EQ(queue->readPosition(), lines * 128);
  EXPECT_EQ(written, expected);
}

// What a statement does when it finds its lane past the limit
// (Statement::beginSlow): a fresh look at the consumer, then the lane
// reopened if the queue is not crowded.
bool reopen(muon::detail::RecordQueue* queue) { return !queue->crowded() && queue->reopenLane(); }

// Whether the next record is past the lap's last place for a statement's
// largest record: the lane goes on only at the next lap.
bool atLapEnd(const muon::detail::RecordQueue* queue) {
  const size_t at = static_cast<size_t>(queue->committed()) & (queue->capacity() - 1);
  return queue->capacity() - at < muon::detail::RecordLane::kMaxStatement;
}

// A thread that logs steadily, with a consumer keeping up, writes every
// statement in place: where the lane stops at its limit (the ring's end, or
// as full as the last look at the consumer allows), the statement looks
// again and the lane goes on, at the next lap past the ring's end, so no
// statement leaves the common path for it. Records of two sizes, so that
// each lap ends somewhere else and the bytes under a lap's wrap marker are
// an earlier lap's: every line must still come out once, in order.
TEST_F(RecordQueueRingTest, ALaneAtItsLimitReopensWhileTheConsumerKeepsUp) {
  ASSERT_NE(queue, nullptr);
  const size_t lines = queue->capacity() / 112 * 7 / 2;
  std::string expected;
  size_t lapEnds = 0;
  for (size_t i = 0; i < lines; ++i) {
    const size_t len = i % 3 == 0 ? 88 : 72;  // records of 120 and 104 bytes
    char text[89];
    std::snprintf(text, sizeof text, "%0*zu\n", static_cast<int>(len - 1), i);
    if (!commitInPlace(queue, text, len)) {
      lapEnds += atLapEnd(queue);
      ASSERT_TRUE(reopen(queue)) << "line " << i << ": the consumer has kept up";
      ASSERT_TRUE(commitInPlace(queue, text, len)) << "line " << i;
    }
    expected.append(text, len);
    if (i % 7 == 6) queues.drain([] {});
  }
  queues.drain([] {});
  queues.writeLines();
  EXPECT_GE(lapEnds, 3u);
  EXPECT_EQ(written, expected);
}

// With the ring as full as a statement may leave it, the lane stays closed:
// the statement takes the slow path (the queue is crowded).
TEST_F(RecordQueueRingTest, ALaneDoesNotReopenWhileTheRingIsFull) {
  ASSERT_NE(queue, nullptr);
  constexpr size_t kLine = 72;
  size_t taken = 0;
  for (;;) {
    char text[kLine + 1];
    std::snprintf(text, sizeof text, "%071zu\n", taken);
    if (!commitInPlace(queue, text, kLine) && !(reopen(queue) && commitInPlace(queue, text, kLine))) break;
    ++taken;
    ASSERT_LT(taken * 104, queue->capacity()) << "the lane never closed";
  }
  EXPECT_FALSE(reopen(queue));
  // The sink's consumer was waiting when woken: records go on to half full.
  EXPECT_GE(taken * 104, queue->capacity() / 2 - muon::detail::RecordLane::kMaxStatement - 104);
  EXPECT_LE(taken * 104, queue->capacity() / 2);
  queues.drain([] {});
  EXPECT_TRUE(reopen(queue));  // the consumer has caught up
}

// A lap begun at the ring's end with nothing after its wrap marker (the
// statement that reopened the lane wrote nothing: its operand threw, or a
// nested statement sent it to the shared buffers), then the thread's exit:
// the consumer reads past the marker, so the queue is seen drained and
// freed.
TEST_F(RecordQueueRingTest, AWrapMarkerWithNoRecordAfterItIsReadPast) {
  ASSERT_NE(queue, nullptr);
  constexpr size_t kLine = 72;
  for (size_t i = 0;; ++i) {
    ASSERT_LT(i * 104, queue->capacity()) << "the lane never reached the ring's end";
    char text[kLine + 1];
    std::snprintf(text, sizeof text, "%071zu\n", i);
    if (!commitInPlace(queue, text, kLine)) {
      if (atLapEnd(queue)) break;
      ASSERT_TRUE(reopen(queue));
      ASSERT_TRUE(commitInPlace(queue, text, kLine));
    }
    queues.drain([] {});
  }
  queues.drain([] {});
  ASSERT_EQ(queue->readPosition(), queue->committed());
  ASSERT_TRUE(reopen(queue));  // the marker, and nothing after it
  EXPECT_GT(queue->committed(), queue->readPosition());
  queue->close();
  queues.drain([] {});
  EXPECT_EQ(queue->readPosition(), queue->committed());
}

// Without a consumer the ring fills up to less than a whole lap: a lap
// ahead of the consumer would look, by its place in the ring, like nothing
// ahead. Every line taken is written; the ones past are dropped.
TEST_F(RecordQueueRingTest, ARingWithoutAConsumerFillsToLessThanALap) {
  ASSERT_NE(queue, nullptr);
  constexpr size_t kLine = 96;
  const size_t perLap = queue->capacity() / 128;
  for (size_t i = 0; i < perLap + 4; ++i) {
    char text[kLine + 1];
    std::snprintf(text, sizeof text, "%095zu\n", i);
    queue->appendLine(text, kLine, 0);
  }
  EXPECT_EQ(queue->committed(), (perLap - 1) * 128);
  queues.drain([] {});
  queues.writeLines();
  EXPECT_EQ(static_cast<size_t>(std::count(written.begin(), written.end(), '\n')), perLap - 1);
}

// The VmFlags line of the mapping in /proc/self/smaps that holds `p` ("" if none does).
std::string vmFlagsOf(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::string flags;
  bool inside = false;
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return flags;
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long from = 0, to = 0;
    if (std::sscanf(line, "%lx-%lx ", &from, &to) == 2) {
      inside = from <= at && at < to;
    } else if (inside && std::strncmp(line, "VmFlags:", 8) == 0) {
      flags = line;
    }
  }
  std::fclose(f);
  return flags;
}

// A ring of whole huge pages lies on a huge page's boundary and is asked for
// in huge pages (VmFlags "hg": MADV_HUGEPAGE), so that a statement starting
// a 4 KiB page of it need not wait for its translation; a smaller ring is
// left to the kernel's default.
TEST(RecordQueueTest, ARingOfWholeHugePagesIsAskedForInHugePages) {
  if (::access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) {
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  }
  if (::access("/proc/self/smaps", R_OK) != 0) GTEST_SKIP() << "no /proc/self/smaps to read the mapping from";
  constexpr size_t kHuge = size_t{2} << 20;
  UndrainedSink sink(true);
  for (size_t capacity : {kHuge, 2 * kHuge, RecordQueues::kMinQueueBytes}) {
    muon::detail::RecordQueue queue(capacity, 1, "    1 ");
    queue.setSink(&sink);
    char* first = queue.reserve(muon::detail::recordSize(8));  // the ring's start
    ASSERT_NE(first, nullptr);
    const std::string flags = vmFlagsOf(first);
    ASSERT_FALSE(flags.empty()) << "no mapping holds the ring";
    const bool asked = flags.find(" hg") != std::string::npos;
    if (capacity % kHuge == 0) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kHuge, 0u) << capacity;
      EXPECT_TRUE(asked) << capacity << ": " << flags;
    } else {
      EXPECT_FALSE(asked) << capacity << ": " << flags;
    }
  }
}

TEST_F(RecordQueuesTest, ThreadsComingAndGoingHaveEveryLineWritten) {
  constexpr int kWaves = 20;
  constexpr int kThreads = 3;
  constexpr int kPerThread = 300;
  {
    AsyncLogging log(dir_.file("waves"), 1L << 30, 3, AsyncLogging::kBlock);
    auto attached = Logger::attach(log);
    log.start();
    for (int w = 0; w < kWaves; ++w) {
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([w, t] {
          for (int i = 0; i < kPerThread; ++i) LOG_INFO << 't' << w * kThreads + t << ' ' << i;
        });
      }
      for (auto& th : threads) th.join();
    }
  }
  muon::test::expectPerThreadOrder(readLines(dir_.files()[0]), kWaves * kThreads, kPerThread);
}

TEST_F(RecordQueuesTest, LinesOfDifferentThreadsAreWrittenInTheOrderTheyWereLogged) {
  // Ping-pong between two threads: each line is logged after the other
  // thread's previous one returned, so the file must alternate.
  constexpr int kRounds = 200;
  {
    AsyncLogging log(dir_.file("merge"), 1L << 30);
    auto attached = Logger::attach(log);
    log.start();
    std::mutex mu;
    std::condition_variable cv;
    int turn = 0;
    auto player = [&](int me) {
      for (int i = 0; i < kRounds; ++i) {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return turn % 2 == me; });
        LOG_INFO << "turn " << turn;
        ++turn;
        cv.notify_all();
      }
    };
    std::thread a(player, 0);
    std::thread b(player, 1);
    a.join();
    b.join();
  }
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), static_cast<size_t>(2 * kRounds));
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_NE(lines[i].find(" INFO  turn " + std::to_string(i) + " - "), std::string::npos)
        << lines[i];
  }
}

TEST_F(RecordQueuesTest, AThreadsOwnAppendsStayInOrderWithItsStatements) {
  {
    AsyncLogging log(dir_.file("mixed"), 1L << 30);
    auto attached = Logger::attach(log);
    log.start();
    std::thread t([&log] {
      for (int i = 0; i < 1000; ++i) {
        LOG_INFO << "statement " << i;
        const std::string line = "appended " + std::to_string(i) + "\n";
        log.append(line.data(), line.size());
      }
    });
    t.join();
  }
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), 2000u);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_NE(lines[2 * i].find("statement " + std::to_string(i) + " - "), std::string::npos)
        << lines[2 * i];
    EXPECT_EQ(lines[2 * i + 1], "appended " + std::to_string(i));
  }
}

TEST_F(RecordQueuesTest, FlushWritesTheRecordsLoggedBeforeIt) {
  AsyncLogging log(dir_.file("flush"), 1L << 30, 600);
  auto attached = Logger::attach(log);
  log.start();
  for (int i = 0; i < 10; ++i) LOG_INFO << "flushed " << i;
  log.flush();
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_NE(lines[9].find("flushed 9"), std::string::npos);
}

TEST_F(RecordQueuesTest, RecordsLoggedBeforeStartAreWritten) {
  {
    AsyncLogging log(dir_.file("early"), 1L << 30);
    auto attached = Logger::attach(log);
    LOG_INFO << "early";
    log.start();
    LOG_INFO << "late";
  }
  const std::vector<std::string> lines = readLines(dir_.files()[0]);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("early"), std::string::npos);
  EXPECT_NE(lines[1].find("late"), std::string::npos);
}

// Statements leave a crowded queue for the shared buffers; a thread's own
// append()s of finished lines stay in its queue until it is full, and then
// the overflow policy applies to them one by one.
TEST_F(RecordQueuesTest, AFullQueueWithoutABackendDropsAndCountsEachAppendedLine) {
  constexpr int kLines = 20000;  // ~2 MB: more than a 64 KiB queue
  AsyncLogging::Stats stats;
  {
    AsyncLogging::Options options;
    options.policy = AsyncLogging::kBlock;  // no backend to wait for: drops
    options.threadQueueBytes = RecordQueues::kMinQueueBytes;
    AsyncLogging log(dir_.file("nobackend"), 1L << 30, options);
    auto attached = Logger::attach(log);
    LOG_INFO << "unwritten line number " << 0;  // makes the thread's queue
    for (int i = 1; i < kLines; ++i) {
      const std::string line = "unwritten line number " + std::to_string(i) + "\n";
      log.append(line.data(), line.size());
    }
    stats = log.stats();
  }
  EXPECT_GT(stats.messagesDropped, 0u);
  uint64_t written = 0;
  uint64_t reported = 0;
  for (const std::string& line : readLines(dir_.files()[0])) {
    const size_t at = line.find("larger buffers (");
    if (at != std::string::npos) {
      reported += std::stoull(line.substr(at + 16));
    } else {
      ++written;
    }
  }
  EXPECT_EQ(reported, stats.messagesDropped);
  EXPECT_EQ(written + reported, static_cast<uint64_t>(kLines));
}

}  // namespace
