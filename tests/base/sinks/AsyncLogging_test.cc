#include "muon/base/AsyncLogging.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "NumberedLine.h"
#include "DropReportLine.h"
#include "PosixRegex.h"
#include "ChildProcess.h"
#include "TempDir.h"
#include "ThreadOrder.h"
#include "muon/base/Logging.h"

using muon::AsyncLogging;
using muon::Logger;
using muon::test::PosixRegex;
using muon::test::readFile;
using muon::test::readLines;
using muon::test::TempDir;

namespace {

class AsyncLoggingTest : public ::testing::Test {
 protected:
  void route(AsyncLogging* log) { attached_ = Logger::attach(*log); }
  void TearDown() override { attached_.detach(); }

  // Every line of every file in the directory.
  std::vector<std::string> allLines() const {
    std::vector<std::string> lines;
    for (const std::string& f : dir_.files()) {
      bool unterminated = false;
      std::vector<std::string> part = readLines(f, &unterminated);
      EXPECT_FALSE(unterminated) << f;
      lines.insert(lines.end(), part.begin(), part.end());
    }
    return lines;
  }

  // Everything in the directory's files, without checking lines (a file
  // may be read while it is being written).
  std::string allText() const {
    std::string text;
    for (const std::string& f : dir_.files()) text += readFile(f);
    return text;
  }

  TempDir dir_;
  muon::LogAttachment attached_;
};

using muon::test::isDropReport;

// The first line is the first of some thread's, from this file; then the
// lines as ThreadOrder.h checks them.
void expectPerThreadOrder(const std::vector<std::string>& lines, int threads, int perThread) {
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(PosixRegex(".* INFO  t[0-9]+ 0 - AsyncLogging_test\\.cc:[0-9]+").fullMatch(lines[0]))
      << lines[0];
  muon::test::expectPerThreadOrder(lines, threads, perThread);
}

TEST_F(AsyncLoggingTest, BlockPolicyKeepsAMillionLinesFromTwoThreads) {
  constexpr int kThreads = 2;
  constexpr int kPerThread = 500000;
  {
    AsyncLogging log(dir_.file("block"), 1L << 30, 3, AsyncLogging::kBlock);
    route(&log);
    log.start();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        for (int i = 0; i < kPerThread; ++i) LOG_INFO << 't' << t << ' ' << i;
      });
    }
    for (auto& th : threads) th.join();
    log.stop();
    EXPECT_EQ(log.stats().messagesDropped, 0u);
  }
  std::vector<std::string> lines = allLines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kPerThread));
  expectPerThreadOrder(lines, kThreads, kPerThread);
}

// Waves of threads that come and go, more at once than there are commit
// stripes, so that stripes are shared and passed on: every line must land,
// each thread's in order. A commit counted on the wrong stripe, or lost,
// would leave the backend waiting for it for ever, so the run is a child
// with a deadline.
TEST_F(AsyncLoggingTest, ThreadsComingAndGoingShareTheCommitStripesAndLoseNothing) {
  constexpr int kWaves = 8;
  constexpr int kThreadsPerWave = 24;
  constexpr int kPerThread = 1000;
  muon::test::ChildResult r = muon::test::runInChild(
      dir_,
      [this] {
        AsyncLogging log(dir_.file("waves"), 1L << 30, 3, AsyncLogging::kBlock);
        route(&log);
        log.start();
        for (int wave = 0; wave < kWaves; ++wave) {
          std::vector<std::thread> threads;
          for (int k = 0; k < kThreadsPerWave; ++k) {
            const int id = wave * kThreadsPerWave + k;
            threads.emplace_back([id] {
              for (int i = 0; i < kPerThread; ++i) LOG_INFO << 't' << id << ' ' << i;
            });
          }
          for (auto& th : threads) th.join();
        }
        log.stop();
      },
      std::chrono::seconds(60));
  ASSERT_TRUE(r.exited) << "the backend waited for commits that never came";
  ASSERT_EQ(r.exitCode(), 0) << r.stderrText;
  std::vector<std::string> lines = allLines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(kWaves * kThreadsPerWave * kPerThread));
  expectPerThreadOrder(lines, kWaves * kThreadsPerWave, kPerThread);
}

TEST_F(AsyncLoggingTest, DropPolicyAccountsForEveryMessage) {
  // A writer that cannot write until the producers are done: the threads'
  // record queues fill up, and records must be dropped and counted.
  std::mutex mu;
  std::condition_variable cv;
  bool producersDone = false;
  constexpr int kThreads = 2;
  constexpr int kPerThread = 70000;  // ~1 KiB lines: ~140 MiB, well over 25 x 4 MiB
  const std::string padding(1000, 'p');
  uint64_t reportedDropped = 0;
  {
    AsyncLogging log(dir_.file("drop"), 1L << 30, 3, AsyncLogging::kDrop);
    log.setWriteFunction([&](int fd, const char* data, size_t len) -> ssize_t {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return producersDone; });
      return ::write(fd, data, len);
    });
    route(&log);
    log.start();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &padding] {
        for (int i = 0; i < kPerThread; ++i) LOG_INFO << "msg " << padding << ' ' << t << ' ' << i;
      });
    }
    for (auto& th : threads) th.join();
    testing::internal::CaptureStderr();
    {
      std::lock_guard<std::mutex> lock(mu);
      producersDone = true;
    }
    cv.notify_all();
    log.stop();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("Dropped log messages at "), std::string::npos) << err;
    reportedDropped = log.stats().messagesDropped;
  }
  uint64_t lines = 0;
  uint64_t droppedInFile = 0;
  for (const std::string& line : allLines()) {
    uint64_t messages = 0;
    if (isDropReport(line, &messages)) {
      droppedInFile += messages;
    } else {
      ASSERT_NE(line.find(" INFO  msg "), std::string::npos) << line.substr(0, 100);
      ++lines;
    }
  }
  EXPECT_GT(droppedInFile, 0u);
  EXPECT_EQ(droppedInFile, reportedDropped);
  EXPECT_EQ(lines + droppedInFile, static_cast<uint64_t>(kThreads * kPerThread));
}

TEST_F(AsyncLoggingTest, BlockPolicyWaitsForASlowWriterAndLosesNothing) {
  constexpr int kPerThread = 60000;  // ~1 KiB lines: ~120 MiB, 30 buffers
  const std::string padding(1000, 'p');
  std::atomic<bool> diskReady{false};
  {
    AsyncLogging log(dir_.file("slow"), 1L << 30, 3, AsyncLogging::kBlock);
    // A disk that takes nothing until a producer has had to wait: the 30
    // buffers cannot all fit under the 25-buffer bound, so one must wait,
    // however fast or slow this machine (or sanitizer) runs the producers.
    log.setWriteFunction([&diskReady](int fd, const char* data, size_t len) -> ssize_t {
      while (!diskReady) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return ::write(fd, data, len);
    });
    route(&log);
    log.start();
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([t, &padding] {
        for (int i = 0; i < kPerThread; ++i) LOG_INFO << 't' << t << ' ' << i << padding;
      });
    }
    while (log.stats().producerWaits == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    diskReady = true;
    for (auto& th : threads) th.join();
    log.stop();
    EXPECT_EQ(log.stats().messagesDropped, 0u);
  }
  EXPECT_EQ(allLines().size(), 2u * kPerThread);
}

TEST_F(AsyncLoggingTest, SparesOutliveABurstAndAreGivenBackOnceItIsOver) {
  const std::string line = std::string(3999, 's') + "\n";
  const uint64_t linesPerBuffer = AsyncLogging::kBufferSize / line.size();
  constexpr uint64_t kBuffers = 20;
  std::atomic<bool> diskOpen{false};
  // A flush interval the test never reaches: the backend wakes only for
  // queued buffers and for flush(), so it is never idle during a burst.
  AsyncLogging log(dir_.file("spares"), 1L << 40, 600, AsyncLogging::kBlock);
  log.setWriteFunction([&diskOpen](int fd, const char* data, size_t len) -> ssize_t {
    while (!diskOpen) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return ::write(fd, data, len);
  });
  log.start();
  // burst appends kBuffers buffers' worth while the disk takes nothing, then
  // lets the disk write every full buffer and closes it again.
  uint64_t appended = 0;
  auto burst = [&] {
    for (uint64_t i = 0; i < kBuffers * linesPerBuffer; ++i) log.append(line.data(), line.size());
    appended += kBuffers * linesPerBuffer;
    diskOpen = true;
    const uint64_t full = (appended / linesPerBuffer - 1) * linesPerBuffer * line.size();
    while (log.stats().file.writtenBytes < full) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    diskOpen = false;
  };
  burst();
  const uint64_t mapped = log.stats().buffersMapped;
  EXPECT_GE(mapped, kBuffers);
  // The next burst runs on the buffers the first one left. It needs one
  // more than the first did: the first one's last buffer, still current
  // when the disk closed, waits unwritten beside it.
  burst();
  EXPECT_LE(log.stats().buffersMapped, mapped + 1);
  // Once no full buffer waits, the spares beyond kMaxSpares go back: a
  // flush takes what is queued, the next finds nothing queued.
  diskOpen = true;
  log.flush();
  log.flush();
  EXPECT_LE(log.stats().buffersHeld, 4u + 1u) << "kMaxSpares spares and the current buffer";
  log.stop();
  EXPECT_EQ(log.stats().messagesDropped, 0u);
}

// Every count from 1 to 64 (the short runs, where a stop races the first
// hand-off), then counts spread up to 1000 (every 37th, and 1000 itself):
// each start and stop maps and unmaps the buffers, so all 1000 would cost a
// minute on a loaded 2-core machine for no case the spread misses.
TEST_F(AsyncLoggingTest, StartLogStopLosesNothingForOneToAThousandLines) {
  std::vector<int> counts;
  for (int n = 1; n <= 64; ++n) counts.push_back(n);
  for (int n = 101; n < 1000; n += 37) counts.push_back(n);
  counts.push_back(1000);
  for (int n : counts) {
    TempDir dir;
    {
      AsyncLogging log(dir.file("quick"), 1L << 30);
      route(&log);
      log.start();
      for (int i = 0; i < n; ++i) LOG_INFO << "line " << i;
      log.stop();
    }
    std::vector<std::string> files = dir.files();
    ASSERT_EQ(files.size(), 1u);
    ASSERT_EQ(readLines(files[0]).size(), static_cast<size_t>(n)) << "n = " << n;
  }
}

TEST_F(AsyncLoggingTest, AfterWriteIsCalledOnceTheLinesAreInTheFileAndNotWhenIdle) {
  std::atomic<int> calls{0};
  std::string seenInFile;
  std::mutex mutex;
  AsyncLogging::Options options;
  options.flushInterval = 1;
  const std::string basename = dir_.file("hook");
  options.afterWrite = [&] {
    // The lines are in the file when the hook runs.
    std::lock_guard<std::mutex> lock(mutex);
    for (const std::string& f : dir_.files()) seenInFile += readFile(f);
    ++calls;
  };
  AsyncLogging log(basename, 1L << 30, options);
  log.start();
  const std::string line = muon::test::numberedLine("hook", 1);
  log.append(line.data(), line.size());
  log.flush();
  EXPECT_GE(calls.load(), 1);
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_NE(seenInFile.find(line), std::string::npos);
  }
  // Nothing written: no call, however many intervals pass.
  const int before = calls.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  EXPECT_EQ(before, calls.load());
  log.stop();
}

// stats().linesWritten counts lines from both paths: records the backend
// formats (LOG_* through attach) and text given to append().
TEST_F(AsyncLoggingTest, StatsCountTheLinesWritten) {
  AsyncLogging log(dir_.file("count"), 1L << 30);
  route(&log);
  log.start();
  for (int i = 0; i < 1000; ++i) LOG_INFO << "record " << i;
  for (int i = 0; i < 234; ++i) log.append("text\n", 5);
  log.flush();
  EXPECT_EQ(log.stats().linesWritten, 1234u);
  log.stop();
  EXPECT_EQ(allLines().size(), 1234u);
}

// Issue #40: a 5,000-byte message (1,250 control bytes, recorded as they
// are and escaped by the backend, which cuts the line) with two kv fields
// and a LogContext field keeps all three; the line carries the cut marker
// and is counted.
TEST_F(AsyncLoggingTest, TheBackendCutsAMessageAndKeepsItsFieldsAndContext) {
  TempDir dir;
  const uint64_t cutBefore = Logger::linesTruncated();
  {
    AsyncLogging log(dir.file("cut"), 1 << 30);
    ASSERT_NE(log.recordSink(), nullptr);
    auto attached = Logger::attach(log);
    log.start();
    muon::LogContext context{{"request_id", "7f3a"}};
    LOG_INFO << std::string(1250, '\x01') << muon::kv("user", "alice") << muon::kv("ms", 12);
    LOG_INFO << std::string(5000, 'x') << muon::kv("user", "alice") << muon::kv("ms", 12);
  }
  std::vector<std::string> lines;
  for (const std::string& f : dir.files()) {
    for (std::string& l : readLines(f)) lines.push_back(std::move(l));
  }
  ASSERT_EQ(lines.size(), 2u);
  const std::string end = std::string(" user=alice ms=12 request_id=7f3a") +
                          std::string(muon::LogStream::kCutMarker) + " - AsyncLogging_test.cc:";
  // An escape ("\x01") is cut whole: the message may end up to 3 bytes short.
  const size_t at = lines[0].find(end);
  EXPECT_TRUE(at <= muon::LogStream::kMessageEnd && at + 3 >= muon::LogStream::kMessageEnd)
      << lines[0].substr(lines[0].size() - 100);
  EXPECT_EQ(lines[0].substr(at - 8, 8), "\\x01\\x01");
  EXPECT_EQ(lines[1].find(end), muon::LogStream::kMessageEnd) << lines[1].substr(lines[1].size() - 100);
  for (const std::string& got : lines) EXPECT_LE(got.size() + 1, muon::LogStream::kBufferSize);
  EXPECT_EQ(Logger::linesTruncated(), cutBefore + 2);
}

TEST_F(AsyncLoggingTest, DestructorWritesWhatWasLogged) {
  {
    AsyncLogging log(dir_.file("dtor"), 1L << 30);
    route(&log);
    log.start();
    for (int i = 0; i < 1234; ++i) LOG_INFO << "line " << i;
    attached_.detach();
  }
  EXPECT_EQ(allLines().size(), 1234u);
}

TEST_F(AsyncLoggingTest, LinesAppendedBeforeStartAreKept) {
  AsyncLogging log(dir_.file("early"), 1L << 30);
  log.append("early\n", 6);
  log.start();
  log.append("late\n", 5);
  log.stop();
  std::vector<std::string> lines = allLines();
  EXPECT_EQ(lines, (std::vector<std::string>{"early", "late"}));
}

TEST_F(AsyncLoggingTest, LinesAppendedAfterStopOrWithoutStartAreWrittenByTheDestructor) {
  {
    AsyncLogging log(dir_.file("after"), 1L << 30);
    log.start();
    log.append("before stop\n", 12);
    log.stop();
    log.append("after stop\n", 11);
  }
  {
    AsyncLogging never(dir_.file("never"), 1L << 30);
    never.append("never started\n", 14);
  }
  std::vector<std::string> lines = allLines();
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"after stop", "before stop", "never started"}));
}

TEST_F(AsyncLoggingTest, BlockPolicyWithoutBackendDropsAndCountsInsteadOfGrowing) {
  // More full buffers than can exist at once, logged before start(): there
  // is no backend to wait for, so kBlock must drop (and count) as kDrop does.
  const std::string line = std::string(1023, 'b') + '\n';
  const size_t perBuffer = AsyncLogging::kBufferSize / line.size();
  const size_t total = perBuffer * (AsyncLogging::kMaxPendingBuffers + 12);
  uint64_t dropped = 0;
  {
    AsyncLogging log(dir_.file("early"), 1L << 30, 3, AsyncLogging::kBlock);
    for (size_t i = 0; i < total; ++i) log.append(line.data(), line.size());
    log.start();
    log.stop();
    dropped = log.stats().messagesDropped;
  }
  EXPECT_GT(dropped, 0u);
  uint64_t lines = 0;
  uint64_t reported = 0;
  for (const std::string& l : allLines()) {
    uint64_t messages = 0;
    if (isDropReport(l, &messages)) {
      reported += messages;
    } else {
      ++lines;
    }
  }
  EXPECT_EQ(reported, dropped);
  EXPECT_EQ(lines + dropped, total);
}

TEST_F(AsyncLoggingTest, FlushWritesEverythingBeforeIt) {
  AsyncLogging log(dir_.file("flush"), 1L << 30, /*flushInterval=*/3600);
  log.start();
  log.append("one\n", 4);
  log.append("two\n", 4);
  log.flush();
  // No stop, and the backend's own interval is an hour away.
  EXPECT_EQ(allLines(), (std::vector<std::string>{"one", "two"}));
  log.stop();
}

TEST_F(AsyncLoggingTest, StartAndStopAreIdempotent) {
  AsyncLogging log(dir_.file("idem"), 1L << 30);
  log.start();
  log.start();
  log.append("x\n", 2);
  log.stop();
  log.stop();
  EXPECT_EQ(allLines().size(), 1u);
  log.flush();  // returns at once when stopped
}

TEST_F(AsyncLoggingTest, MessageLargerThanABufferIsCut) {
  std::string huge(AsyncLogging::kBufferSize + 12345, 'h');
  AsyncLogging log(dir_.file("huge"), 1L << 30);
  log.start();
  log.append(huge.data(), huge.size());
  log.append("after\n", 6);
  log.stop();
  std::string all;
  for (const std::string& f : dir_.files()) all += readFile(f);
  EXPECT_EQ(all.size(), AsyncLogging::kBufferSize + 6);
  EXPECT_EQ(all.substr(all.size() - 6), "after\n");
}

TEST_F(AsyncLoggingTest, StatsCountWrittenBytes) {
  AsyncLogging log(dir_.file("stats"), 1L << 30);
  log.start();
  for (int i = 0; i < 1000; ++i) log.append("0123456789\n", 11);
  log.stop();
  EXPECT_EQ(log.stats().file.writtenBytes, 11000u);
  EXPECT_EQ(log.stats().messagesDropped, 0u);
}

TEST_F(AsyncLoggingTest, RollsBySizeAtBufferBoundariesWithoutSplittingLines) {
  {
    AsyncLogging log(dir_.file("roll"), 64 * 1024, 1);
    route(&log);
    log.start();
    for (int i = 0; i < 20000; ++i) {
      LOG_INFO << 't' << 0 << ' ' << i;
      if (i % 5000 == 4999) log.flush();  // several batches, so several files
    }
    log.stop();
  }
  EXPECT_GT(dir_.files().size(), 2u);
  expectPerThreadOrder(allLines(), 1, 20000);
}

static_assert(AsyncLogging::kBufferSize == 4u * 1024 * 1024, "muduo's 4 MiB buffers");
static_assert(AsyncLogging::kMaxPendingBuffers == 25, "muduo's bound on pending buffers");

// Line i of a fixed `size`, '\n' included, so that whole buffers hold a
// known number of lines.
std::string numberedLine(size_t i, size_t size) {
  std::string line = "seq " + std::to_string(i) + ' ';
  line.resize(size - 1, 'x');
  return line + '\n';
}

// Nothing asks it to: the backend wakes on its own after flushInterval and
// writes the partly filled buffer.
TEST_F(AsyncLoggingTest, BackendWritesEveryFlushIntervalUnasked) {
  AsyncLogging log(dir_.file("tick"), 1L << 30, /*flushInterval=*/1);
  log.start();
  log.append("tick\n", 5);
  bool written = false;
  for (int i = 0; i < 1000 && !written; ++i) {  // 10 s at most; ~1 s expected
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    written = allText() == "tick\n";
  }
  EXPECT_TRUE(written) << "not written within 10 s with flushInterval 1";
  log.stop();
}

// A full buffer wakes the backend at once, long before its hourly tick.
TEST_F(AsyncLoggingTest, FullBufferWakesTheBackend) {
  const size_t lineSize = 1024;
  const size_t perBuffer = AsyncLogging::kBufferSize / lineSize;
  AsyncLogging log(dir_.file("full"), 1L << 30, /*flushInterval=*/3600);
  log.start();
  for (size_t i = 0; i <= perBuffer; ++i) {  // one line into the second buffer
    std::string line = numberedLine(i, lineSize);
    log.append(line.data(), line.size());
  }
  bool written = false;
  for (int i = 0; i < 2000 && !written; ++i) {  // 20 s at most
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    written = allText().size() >= AsyncLogging::kBufferSize - 64 * 1024;
  }
  // The file's own 64 KiB buffer may hold back the end of the first buffer
  // until a flush; the rest must be there.
  EXPECT_TRUE(written) << allText().size() << " bytes written";
  log.stop();
  EXPECT_EQ(allLines().size(), perBuffer + 1);
}

// muduo's rule: over kMaxPendingBuffers queued, all but the first two are
// dropped. Which lines survive, and the report's N and M, exactly.
TEST_F(AsyncLoggingTest, DropKeepsTheFirstTwoBuffersAndReportsExactCounts) {
  const size_t lineSize = 1024;
  const size_t perBuffer = AsyncLogging::kBufferSize / lineSize;
  const size_t fullBuffers = AsyncLogging::kMaxPendingBuffers + 1;
  const size_t tail = 10;  // in the current buffer, after the drop
  const size_t total = fullBuffers * perBuffer + tail;
  uint64_t buffersDropped = 0, messagesDropped = 0;
  testing::internal::CaptureStderr();
  {
    // No backend yet: the queue fills and the overflow rule applies.
    AsyncLogging log(dir_.file("first2"), 1L << 30, 3, AsyncLogging::kDrop);
    for (size_t i = 0; i < total; ++i) {
      std::string line = numberedLine(i, lineSize);
      log.append(line.data(), line.size());
    }
    log.start();
    log.stop();
    buffersDropped = log.stats().buffersDropped;
    messagesDropped = log.stats().messagesDropped;
  }
  std::string err = testing::internal::GetCapturedStderr();
  const uint64_t droppedBuffers = AsyncLogging::kMaxPendingBuffers - 1;
  EXPECT_EQ(buffersDropped, droppedBuffers);
  EXPECT_EQ(messagesDropped, droppedBuffers * perBuffer);
  const std::string report = std::to_string(droppedBuffers) + " larger buffers (" +
                             std::to_string(droppedBuffers * perBuffer) + " messages)";
  EXPECT_NE(err.find(report), std::string::npos) << err;

  std::vector<size_t> expected;
  for (size_t i = 0; i < 2 * perBuffer; ++i) expected.push_back(i);
  for (size_t i = fullBuffers * perBuffer; i < total; ++i) expected.push_back(i);
  std::vector<size_t> kept;
  int reports = 0;
  for (const std::string& line : allLines()) {
    uint64_t messages = 0;
    if (isDropReport(line, &messages)) {
      ++reports;
      EXPECT_NE(line.find(report), std::string::npos) << line;
      continue;
    }
    ASSERT_EQ(line.compare(0, 4, "seq "), 0) << line.substr(0, 40);
    kept.push_back(std::stoul(line.substr(4)));
  }
  EXPECT_EQ(reports, 1);
  EXPECT_EQ(kept, expected);
}

// Without a policy, a full queue drops: a producer is never held up by a
// writer that is stuck (kBlock would hold it).
TEST_F(AsyncLoggingTest, DropIsTheDefaultPolicy) {
  std::mutex mu;
  std::condition_variable cv;
  bool writerFree = false;
  const size_t lineSize = 1024;
  const size_t total = (AsyncLogging::kMaxPendingBuffers + 5) * (AsyncLogging::kBufferSize / lineSize);
  AsyncLogging log(dir_.file("default"), 1L << 30);
  log.setWriteFunction([&](int fd, const char* data, size_t len) -> ssize_t {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return writerFree; });
    return ::write(fd, data, len);
  });
  log.start();
  std::atomic<bool> producerDone{false};
  std::thread producer([&] {
    const std::string line = numberedLine(0, lineSize);
    for (size_t i = 0; i < total; ++i) log.append(line.data(), line.size());
    producerDone = true;
  });
  while (!producerDone && log.stats().producerWaits == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(producerDone.load()) << "the producer waited: the default is not kDrop";
  {
    std::lock_guard<std::mutex> lock(mu);
    writerFree = true;
  }
  cv.notify_all();
  producer.join();
  testing::internal::CaptureStderr();
  log.stop();
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.stats().producerWaits, 0u);
  EXPECT_GT(log.stats().buffersDropped, 0u);
}

// start() returns only once the backend thread runs: its first act, naming
// itself, is always visible by then.
TEST_F(AsyncLoggingTest, StartReturnsOnceTheBackendRuns) {
  auto backendNamed = [] {
    for (const std::string& task : TempDir::filesIn("/proc/self/task")) {
      std::string comm = readFile(task + "/comm");
      if (comm == std::string(AsyncLogging::kBackendThreadName) + "\n") return true;
    }
    return false;
  };
  for (int i = 0; i < 100; ++i) {
    AsyncLogging log(dir_.file("start"), 1L << 30);
    ASSERT_FALSE(backendNamed());
    log.start();
    ASSERT_TRUE(backendNamed()) << "start() returned before the backend ran, round " << i;
    log.stop();
  }
}

// With no memory for a fresh buffer (mmap fails: RLIMIT_AS), a producer
// drops its line and counts it; nothing throws out of append().
TEST_F(AsyncLoggingTest, NoMemoryForAFreshBufferDropsAndCountsInsteadOfThrowing) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: RLIMIT_AS cannot be lowered";
#else
  const std::string line = std::string(99, 'n') + "\n";
  const long kLines = 100000;  // ~10 MB: three buffers' worth
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int code = 0;
    {
      AsyncLogging log(dir_.file("nomem"), 1L << 40, 3, AsyncLogging::kBlock);
      long pages = 0;
      if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
        std::fclose(f);
      }
      struct rlimit old;
      ::getrlimit(RLIMIT_AS, &old);
      struct rlimit low = old;
      // Room for small allocations, not for another 4 MiB buffer.
      low.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::getpagesize()) + (1 << 20);
      if (pages == 0 || ::setrlimit(RLIMIT_AS, &low) != 0) ::_exit(10);
      try {
        for (long i = 0; i < kLines; ++i) log.append(line.data(), line.size());
      } catch (...) {
        ::_exit(11);
      }
      ::setrlimit(RLIMIT_AS, &old);
      AsyncLogging::Stats st = log.stats();
      if (st.messagesDropped == 0 || st.buffersDropped != 0) code = 12;
    }  // the destructor writes the first buffer and the drop report
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "10: no limit, 11: threw, 12: nothing counted";
  long inFile = 0;
  uint64_t reported = 0;
  for (const std::string& l : allLines()) {
    uint64_t m = 0;
    if (isDropReport(l, &m)) reported += m;
    inFile += l == line.substr(0, 99);
  }
  EXPECT_GT(inFile, 0);
  EXPECT_EQ(inFile + static_cast<long>(reported), kLines);
#endif
}

TEST_F(AsyncLoggingTest, FileOptionsReachItsLogFile) {
  AsyncLogging::Options o;
  o.files.currentLink = true;
  o.files.maxFiles = 2;
  AsyncLogging log(dir_.file("opts"), 1L << 40, o);
  log.append("one\n", 4);
  log.start();
  log.flush();
  char target[4096] = {};
  ASSERT_GT(::readlink(dir_.file("opts.log").c_str(), target, sizeof target - 1), 0);
  EXPECT_EQ(readFile(dir_.file(target)), "one\n");
}

using AsyncLoggingDeathTest = AsyncLoggingTest;

TEST_F(AsyncLoggingDeathTest, FatalLineLandsInTheFileBeforeAbort) {
  // The "fast" style forks right here, so the child writes into this test's
  // directory (no other thread runs at this point).
  GTEST_FLAG_SET(death_test_style, "fast");
  std::string base = dir_.file("fatal");
  EXPECT_DEATH(
      {
        AsyncLogging log(base, 1L << 30, 3600);
        route(&log);
        log.start();
        for (int i = 0; i < 100; ++i) LOG_INFO << "before " << i;
        LOG_FATAL << "the fatal marker";
      },
      "");
  std::vector<std::string> lines = allLines();
  ASSERT_EQ(lines.size(), 101u);
  EXPECT_NE(lines.back().find(" FATAL the fatal marker - AsyncLogging_test.cc:"), std::string::npos)
      << lines.back();
}

// Release builds keep their asserts (CMakeLists.txt sets no -DNDEBUG): this
// assert, inside the library, must fire in the build under test.
TEST_F(AsyncLoggingDeathTest, LibraryAssertsAreOnInReleaseBuilds) {
  GTEST_FLAG_SET(death_test_style, "fast");
  std::string base = dir_.file("assert");
  EXPECT_DEATH(
      {
        AsyncLogging log(base, 1L << 30);
        log.start();
        log.setWriteFunction(nullptr);
      },
      "setWriteFunction must come before start");
}

// SIGHUP asks the AsyncLogging it names for a new file, as a logrotate
// postrotate script would; the handler does only what is signal-safe.
std::atomic<AsyncLogging*> g_reopenTarget{nullptr};
std::atomic<int> g_hangups{0};
void onHangup(int) {
  if (AsyncLogging* log = g_reopenTarget.load()) log->requestReopen();
  g_hangups.fetch_add(1);
}

class AsyncLoggingReopen : public ::testing::Test {
 protected:
  void SetUp() override {
    struct sigaction sa {};
    sa.sa_handler = &onHangup;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ASSERT_EQ(::sigaction(SIGHUP, &sa, &oldAction_), 0);
    g_hangups = 0;
  }
  void TearDown() override {
    ::sigaction(SIGHUP, &oldAction_, nullptr);
    g_reopenTarget = nullptr;
  }

  // Sends SIGHUP to this thread and waits until the handler has run (TSan
  // defers signals to its next interception point).
  void hangUp() {
    int before = g_hangups.load();
    ASSERT_EQ(::raise(SIGHUP), 0);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (g_hangups.load() == before) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "SIGHUP handler never ran";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  static void logLines(AsyncLogging& log, const std::string& tag, int n) {
    for (int i = 0; i < n; ++i) {
      std::string line = muon::test::numberedLine(tag, i);
      log.append(line.data(), line.size());
    }
  }

  // The lines of `file`, each checked whole.
  static std::vector<std::string> wholeLines(const std::string& file) {
    bool unterminated = false;
    std::vector<std::string> lines = readLines(file, &unterminated);
    EXPECT_FALSE(unterminated) << file << " ends inside a line";
    for (std::string& line : lines) line += '\n';
    return lines;
  }

  static std::vector<std::string> numbered(const std::string& tag, int n) {
    std::vector<std::string> lines;
    for (int i = 0; i < n; ++i) lines.push_back(muon::test::numberedLine(tag, i));
    return lines;
  }

  struct sigaction oldAction_ {};
  TempDir dir_;
};

// A flushInterval far longer than the test: the backend wakes only when asked.
constexpr int kNoTick = 60;
constexpr int kLines = 1000;

TEST_F(AsyncLoggingReopen, SighupAfterRenameSendsLaterLinesToANewFileAndLosesNone) {
  AsyncLogging log(dir_.file("hup"), 1 << 30, kNoTick, AsyncLogging::kBlock);
  g_reopenTarget = &log;
  log.start();
  logLines(log, "before", kLines);
  log.flush();
  ASSERT_EQ(dir_.files().size(), 1u);
  std::string rotated = dir_.file("hup.rotated");
  ASSERT_EQ(::rename(dir_.files()[0].c_str(), rotated.c_str()), 0);  // logrotate's "create" mode
  logLines(log, "middle", kLines);  // the old file or the new: either, whole
  hangUp();
  log.flush();
  logLines(log, "after", kLines);
  log.stop();

  // The renamed file and one new file: the roll LogFile makes when it sees
  // the rename serves the request, so there is no third, empty one.
  std::vector<std::string> files = dir_.files();
  ASSERT_EQ(files.size(), 2u);
  std::string fresh = files[0] == rotated ? files[1] : files[0];
  std::vector<std::string> old = wholeLines(rotated);
  std::vector<std::string> now = wholeLines(fresh);
  std::vector<std::string> before = numbered("before", kLines);
  std::vector<std::string> after = numbered("after", kLines);
  // old = before + a prefix of middle; now = the rest of middle + after.
  ASSERT_GE(old.size(), before.size());
  EXPECT_TRUE(std::equal(before.begin(), before.end(), old.begin()));
  ASSERT_GE(now.size(), after.size());
  EXPECT_TRUE(std::equal(after.begin(), after.end(), now.end() - kLines));
  std::vector<std::string> middle(old.begin() + kLines, old.end());
  middle.insert(middle.end(), now.begin(), now.end() - kLines);
  EXPECT_TRUE(middle == numbered("middle", kLines)) << middle.size() << " middle lines";
}

TEST_F(AsyncLoggingReopen, SighupStartsANewFileAfterWritingWhatCameBefore) {
  AsyncLogging log(dir_.file("hup"), 1 << 30, kNoTick, AsyncLogging::kBlock);
  g_reopenTarget = &log;
  log.start();
  logLines(log, "before", kLines);
  hangUp();
  log.flush();
  logLines(log, "after", kLines);
  log.stop();
  EXPECT_EQ(log.stats().file.filesCreated, 2u);

  // Names carry the time, and a second roll in one second gets ".1".
  std::vector<std::string> files = dir_.files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(wholeLines(files[0]) == numbered("before", kLines)) << files[0];
  EXPECT_TRUE(wholeLines(files[1]) == numbered("after", kLines)) << files[1];
}

}  // namespace
