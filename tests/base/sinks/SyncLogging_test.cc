#include "muon/base/SyncLogging.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ChildProcess.h"
#include "TempDir.h"
#include "muon/base/Logging.h"

using muon::SyncLogging;
using muon::test::readFile;
using muon::test::readLines;
using muon::test::TempDir;

namespace {

std::string line(int thread, int i) {
  return "thread " + std::to_string(thread) + " line " + std::to_string(i) + " " +
         std::string(static_cast<size_t>(i % 97), 'x') + "\n";
}

// Every line of every file in `dir`, files in name order (which is time order).
std::vector<std::string> allLines(const TempDir& dir) {
  std::vector<std::string> lines;
  for (const std::string& f : dir.files()) {
    std::vector<std::string> more = readLines(f);
    lines.insert(lines.end(), more.begin(), more.end());
  }
  return lines;
}

TEST(SyncLogging, ManyThreadsLinesAreWholeAndInEachThreadsOrder) {
  TempDir dir;
  constexpr int kThreads = 8;
  constexpr int kLines = 5000;
  {
    SyncLogging log(dir.file("app"), 1 << 30);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&log, t] {
        for (int i = 0; i < kLines; ++i) {
          std::string s = line(t, i);
          log.append(s.data(), s.size());
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  std::vector<std::string> lines = allLines(dir);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kLines));
  std::map<int, int> next;
  for (const std::string& l : lines) {
    int t = -1, i = -1;
    ASSERT_EQ(std::sscanf(l.c_str(), "thread %d line %d", &t, &i), 2) << l;
    ASSERT_EQ(l + "\n", line(t, i)) << "a line was cut or mixed with another";
    ASSERT_EQ(i, next[t]) << "thread " << t << " out of order";
    next[t] = i + 1;
  }
}

// Issue #40: a 5,000-byte message with two kv fields and a LogContext
// field keeps all three in the file; the line carries the cut marker and
// is counted.
TEST(SyncLogging, ACutMessageKeepsItsFieldsAndContext) {
  TempDir dir;
  const uint64_t cutBefore = muon::Logger::linesTruncated();
  {
    SyncLogging log(dir.file("app"), 1 << 30);
    auto attached = muon::Logger::attach(log);
    muon::LogContext context{{"request_id", "7f3a"}};
    LOG_INFO << std::string(5000, 'x') << muon::kv("user", "alice") << muon::kv("ms", 12);
  }
  const std::vector<std::string> lines = allLines(dir);
  ASSERT_EQ(lines.size(), 1u);
  const std::string& got = lines[0];
  EXPECT_LE(got.size() + 1, muon::LogStream::kBufferSize);
  const std::string end = std::string(" user=alice ms=12 request_id=7f3a") +
                          std::string(muon::LogStream::kCutMarker) + " - SyncLogging_test.cc:";
  ASSERT_NE(got.find(end), std::string::npos) << got.substr(got.size() - 100);
  EXPECT_EQ(got.find(end), muon::LogStream::kMessageEnd);
  EXPECT_EQ(muon::Logger::linesTruncated(), cutBefore + 1);
}

TEST(SyncLogging, RollsBySizeAndKeepsEveryLine) {
  TempDir dir;
  constexpr int kLines = 3000;
  {
    SyncLogging log(dir.file("app"), 20 * 1000);
    for (int i = 0; i < kLines; ++i) {
      std::string s = line(0, i);
      log.append(s.data(), s.size());
    }
  }
  EXPECT_GT(dir.files().size(), 5u);
  EXPECT_EQ(allLines(dir).size(), static_cast<size_t>(kLines));
}

TEST(SyncLogging, BufferedLinesReachTheFileAtFlush) {
  TempDir dir;
  SyncLogging log(dir.file("app"), 1 << 30);
  std::string s = line(0, 1);
  log.append(s.data(), s.size());
  EXPECT_EQ(readFile(log.currentFileName()), "") << "buffered by default";
  log.flush();
  EXPECT_EQ(readFile(log.currentFileName()), s);
}

TEST(SyncLogging, TheFirstLineAfterTheFlushIntervalFlushesTheBuffer) {
  TempDir dir;
  SyncLogging::Options options;
  options.flushInterval = 1;
  SyncLogging log(dir.file("app"), 1 << 30, options);
  std::string first = line(0, 0), tick = line(0, 1);
  log.append(first.data(), first.size());
  EXPECT_EQ(readFile(log.currentFileName()), "");
  // A line every 100 ms: under the 64 appends after which LogFile looks at
  // the time itself, so only the interval check can flush.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (readFile(log.currentFileName()).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    log.append(tick.data(), tick.size());
  }
  EXPECT_EQ(readFile(log.currentFileName()).substr(0, first.size()), first);
}

TEST(SyncLogging, WriteThroughLineIsInTheFileWhenAppendReturns) {
  TempDir dir;
  SyncLogging::Options options;
  options.writeThrough = true;
  SyncLogging log(dir.file("app"), 1 << 30, options);
  std::string s = line(0, 1);
  log.append(s.data(), s.size());
  EXPECT_EQ(readFile(log.currentFileName()), s);
}

TEST(SyncLogging, WriteThroughLinesSurviveKillNine) {
  TempDir dir;
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipefd[0]);
    SyncLogging::Options options;
    options.writeThrough = true;
    SyncLogging log(dir.file("app"), 1 << 30, options);
    for (int i = 0; i < 100; ++i) {
      std::string s = line(0, i);
      log.append(s.data(), s.size());
    }
    char done = 'x';
    if (::write(pipefd[1], &done, 1) != 1) ::_exit(2);
    ::pause();
    ::_exit(0);
  }
  ::close(pipefd[1]);
  char done = 0;
  ASSERT_EQ(::read(pipefd[0], &done, 1), 1);
  ::close(pipefd[0]);
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_TRUE(muon::test::waitWithDeadline(pid, &status, std::chrono::seconds(10)));
  EXPECT_EQ(allLines(dir).size(), 100u);
}

TEST(SyncLogging, RequestReopenStartsANewFileAtTheNextAppend) {
  TempDir dir;
  SyncLogging log(dir.file("app"), 1 << 30);
  std::string a = line(0, 0), b = line(0, 1);
  log.append(a.data(), a.size());
  std::string first = log.currentFileName();
  log.requestReopen();
  EXPECT_EQ(log.currentFileName(), first) << "nothing happens until the next append";
  log.append(b.data(), b.size());
  EXPECT_NE(log.currentFileName(), first);
  log.flush();
  EXPECT_EQ(readFile(first), a);
  EXPECT_EQ(readFile(log.currentFileName()), b);
}

TEST(SyncLogging, UnwritableDirectoryCountsTheLostBytesAndGoesOn) {
  SyncLogging log("/nonexistent-muon-dir/app", 1 << 30);
  std::string s = line(0, 1);
  log.append(s.data(), s.size());
  log.flush();
  EXPECT_EQ(log.currentFileName(), "");
  EXPECT_EQ(log.stats().file.lostBytes, s.size());
}

TEST(SyncLogging, RetentionOptionsApply) {
  TempDir dir;
  SyncLogging::Options options;
  options.files.maxFiles = 2;
  {
    SyncLogging log(dir.file("app"), 1000, options);
    for (int i = 0; i < 500; ++i) {
      std::string s = line(0, i);
      log.append(s.data(), s.size());
    }
  }
  EXPECT_EQ(dir.files().size(), 2u);
}

TEST(SyncLogging, AttachedLoggerLinesAtTheFlushLevelAreWrittenAtOnce) {
  TempDir dir;
  SyncLogging log(dir.file("app"), 1 << 30);
  muon::Logger::setFlushLevel(muon::Logger::WARN);
  {
    muon::LogAttachment attached = muon::Logger::attach(log);
    LOG_INFO << "quiet";
    EXPECT_EQ(readFile(log.currentFileName()), "");
    LOG_WARN << "loud";
    std::vector<std::string> lines = readLines(log.currentFileName());
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[0].find("INFO  quiet - "), std::string::npos) << lines[0];
    EXPECT_NE(lines[1].find("WARN  loud - "), std::string::npos) << lines[1];
  }
  muon::Logger::setFlushLevel(muon::Logger::FATAL);
}

}  // namespace
