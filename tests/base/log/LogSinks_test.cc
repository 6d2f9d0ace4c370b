// Several sinks at once (Logger::addSink): every line to each sink its
// level reaches, flushes to all, each attachment ending on its own.
#include "muon/base/internal/LogSinks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "LineCapture.h"
#include "StdoutCapture.h"
#include "TempDir.h"
#include "UnixDatagramReceiver.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/base/StdoutSink.h"
#include "muon/base/SyslogSink.h"

using muon::AsyncLogging;
using muon::LogAttachment;
using muon::Logger;
using muon::test::LineCapture;
using muon::test::stdoutDuring;
using muon::test::readLines;
using muon::test::TempDir;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class LogSinksTest : public ::testing::Test {
 protected:
  void SetUp() override { Logger::setLogLevel(Logger::TRACE); }
  void TearDown() override {
    Logger::setLogLevel(Logger::INFO);
    Logger::setFlushLevel(Logger::FATAL);
    Logger::setOutput(nullptr);
    Logger::setFlush(nullptr);
  }
};

TEST_F(LogSinksTest, TwoSinksGetEveryLineAndEveryFlush) {
  LineCapture a;
  LineCapture b;
  auto toA = Logger::addSink(a);
  auto toB = Logger::addSink(b);
  for (int i = 0; i < 10; ++i) LOG_INFO << "line " << i;
  LOG_DEBUG << "a debug line";
  Logger::flush();
  ASSERT_EQ(a.size(), 11u);
  EXPECT_EQ(a.lines(), b.lines());
  EXPECT_TRUE(has(a.lines()[9], "INFO  line 9 - LogSinks_test.cc:")) << a.lines()[9];
  EXPECT_EQ(a.flushes(), 1);
  EXPECT_EQ(b.flushes(), 1);
}

TEST_F(LogSinksTest, AnAddedSinkJoinsOneAttachedBefore) {
  LineCapture attached;
  LineCapture added;
  auto a = Logger::attach(attached);
  auto b = Logger::addSink(added);
  LOG_INFO << "to both";
  EXPECT_EQ(attached.count("to both"), 1u);
  EXPECT_EQ(added.count("to both"), 1u);
  // attach() makes its sink the only one again.
  LineCapture only;
  auto c = Logger::attach(only);
  LOG_INFO << "to the last";
  EXPECT_EQ(only.count("to the last"), 1u);
  EXPECT_EQ(attached.count("to the last") + added.count("to the last"), 0u);
  // The replaced ones' ends change nothing.
  a.detach();
  b.detach();
  LOG_INFO << "still the last";
  EXPECT_EQ(only.count("still the last"), 1u);
}

TEST_F(LogSinksTest, EachSinkGetsTheLinesAtOrAboveItsMinimumLevel) {
  LineCapture file;
  LineCapture console;
  auto toFile = Logger::addSink(file, {Logger::INFO});
  auto toConsole = Logger::addSink(console, {Logger::WARN});
  LOG_DEBUG << "debug";
  LOG_INFO << "info";
  LOG_WARN << "warn";
  LOG_ERROR << "error";
  ASSERT_EQ(file.size(), 3u);
  EXPECT_TRUE(has(file.lines()[0], "INFO  info"));
  ASSERT_EQ(console.size(), 2u);
  EXPECT_TRUE(has(console.lines()[0], "WARN  warn"));
  EXPECT_TRUE(has(console.lines()[1], "ERROR error"));
  // A flush reaches a sink whatever its level.
  Logger::flush();
  EXPECT_EQ(console.flushes(), 1);
}

// One sink left with a minimum level keeps it.
TEST_F(LogSinksTest, ALoneSinkKeepsItsMinimumLevel) {
  LineCapture console;
  auto toConsole = Logger::addSink(console, {Logger::WARN});
  LOG_INFO << "info";
  LOG_WARN << "warn";
  ASSERT_EQ(console.size(), 1u);
  EXPECT_TRUE(has(console.last(), "WARN  warn"));
}

// The ring's lines keep their levels; its markers carry the trigger's.
TEST_F(LogSinksTest, TheBacktraceRingsLinesReachTheSinksTheirLevelsReach) {
  Logger::setLogLevel(Logger::INFO);
  LineCapture all;
  LineCapture warnings;
  auto toAll = Logger::addSink(all);
  auto toWarnings = Logger::addSink(warnings, {Logger::WARN});
  Logger::enableBacktrace(4);
  LOG_DEBUG << "what led up to it";
  LOG_ERROR << "the error";
  Logger::enableBacktrace(0);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_TRUE(has(all.lines()[1], "DEBUG ")) << all.lines()[1];
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_TRUE(has(warnings.lines()[0], "---- backtrace:")) << warnings.lines()[0];
  EXPECT_TRUE(has(warnings.lines()[1], "---- end of backtrace ----")) << warnings.lines()[1];
  EXPECT_TRUE(has(warnings.lines()[2], "ERROR the error")) << warnings.lines()[2];
}

// Ends `first` and then `second`: the other sink goes on alone, then stdout.
void detachOneThenTheOther(LogAttachment& first, LineCapture& firstSink, LogAttachment& second,
                           LineCapture& secondSink) {
  first.detach();
  LOG_INFO << "after the first";
  EXPECT_EQ(firstSink.count("after the first"), 0u);
  EXPECT_EQ(secondSink.count("after the first"), 1u);
  Logger::flush();
  EXPECT_EQ(firstSink.flushes(), 0);
  EXPECT_EQ(secondSink.flushes(), 1);
  const std::string out = stdoutDuring([&] {
    second.detach();
    LOG_INFO << "after both";
  });
  EXPECT_EQ(secondSink.count("after both"), 0u);
  EXPECT_TRUE(has(out, "after both")) << out;
}

TEST_F(LogSinksTest, DetachingTheFirstThenTheSecond) {
  LineCapture a;
  LineCapture b;
  auto toA = Logger::addSink(a);
  auto toB = Logger::addSink(b, {Logger::INFO});
  detachOneThenTheOther(toA, a, toB, b);
}

TEST_F(LogSinksTest, DetachingTheSecondThenTheFirst) {
  LineCapture a;
  LineCapture b;
  auto toA = Logger::addSink(a, {Logger::INFO});
  auto toB = Logger::addSink(b);
  detachOneThenTheOther(toB, b, toA, a);
}

TEST_F(LogSinksTest, AFlushLevelFlushesEverySink) {
  LineCapture a;
  LineCapture b;
  auto toA = Logger::addSink(a);
  auto toB = Logger::addSink(b, {Logger::ERROR});
  Logger::setFlushLevel(Logger::WARN);
  LOG_INFO << "not flushed";
  LOG_WARN << "flushed";
  EXPECT_EQ(a.flushes(), 1);
  EXPECT_EQ(b.flushes(), 1);
  EXPECT_EQ(b.size(), 0u);
}

TEST_F(LogSinksTest, SetOutputTakesTheLinesAndAnAddedSinkTakesThemBack) {
  LineCapture a;
  LineCapture b;
  auto toA = Logger::addSink(a);
  auto toB = Logger::addSink(b);
  const std::string out = stdoutDuring([] {
    Logger::setOutput(nullptr);
    LOG_INFO << "to stdout";
  });
  EXPECT_TRUE(has(out, "to stdout")) << out;
  EXPECT_EQ(a.count("to stdout") + b.count("to stdout"), 0u);
  // Flushes still go to the sinks.
  Logger::flush();
  EXPECT_EQ(a.flushes(), 1);
  LineCapture c;
  auto toC = Logger::addSink(c);
  LOG_INFO << "to the new one";
  EXPECT_EQ(c.count("to the new one"), 1u);
  EXPECT_EQ(a.count("to the new one") + b.count("to the new one"), 0u);
}

// The headline case: a file and the console at WARN, two lines of set-up.
TEST_F(LogSinksTest, AFileAndTheConsoleAtWarn) {
  TempDir dir;
  std::string out;
  {
    AsyncLogging file(dir.file("server"), 1L << 30);
    muon::StdoutSink console;
    file.start();
    out = stdoutDuring([&] {
      auto toFile = Logger::addSink(file);
      auto toConsole = Logger::addSink(console, {Logger::WARN});
      LOG_INFO << "started";
      LOG_WARN << "disk at 93%";
      Logger::flush();
    });
  }
  ASSERT_EQ(dir.files().size(), 1u);
  const std::vector<std::string> lines = readLines(dir.files()[0]);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(has(lines[0], "INFO  started"));
  EXPECT_TRUE(has(lines[1], "WARN  disk at 93%"));
  EXPECT_EQ(out, lines[1] + "\n");
}

// A sink that takes records gets records, one that takes text the text:
// SyslogSink's message carries the level's severity and the record's time,
// which a text line would not (severity notice, no TIMESTAMP).
TEST_F(LogSinksTest, AsyncLoggingAndSyslogSinkTogether) {
  TempDir dir;
  muon::test::UnixDatagramReceiver daemon;
  ASSERT_TRUE(daemon.bound());
  muon::SyslogOptions options;
  options.path = daemon.path();
  options.hostname = "host";
  options.appName = "app";
  std::vector<std::string> received;
  {
    AsyncLogging file(dir.file("server"), 1L << 30);
    muon::SyslogSink syslog(options);
    file.start();
    auto toFile = Logger::addSink(file);
    auto toSyslog = Logger::addSink(syslog, {Logger::WARN});
    LOG_INFO << "to the file only";
    LOG_WARN << "to both";
    LOG_ERROR << "to both too";
    Logger::flush();
    for (int i = 0; i < 2; ++i) received.push_back(daemon.receive());
    EXPECT_EQ(daemon.receive(100), "");
    EXPECT_EQ(syslog.stats().sent, 2u);
  }
  ASSERT_EQ(dir.files().size(), 1u);
  const std::vector<std::string> lines = readLines(dir.files()[0]);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(has(lines[2], "ERROR to both too"));
  // facility user (1): WARN is <12> (warning), ERROR <11> (err).
  EXPECT_EQ(received[0].rfind("<12>1 20", 0), 0u) << received[0];
  EXPECT_TRUE(has(received[0], " host app ")) << received[0];
  EXPECT_TRUE(has(received[0], "WARN  to both - LogSinks_test.cc:")) << received[0];
  EXPECT_EQ(received[1].rfind("<11>1 20", 0), 0u) << received[1];
}

// A thread keeps adding and ending two more sinks, in either order, while
// others log: each statement follows one configuration, so the sink that
// stays gets every line exactly once.
TEST_F(LogSinksTest, AddingAndDetachingRaceWithLoggingThreads) {
  constexpr int kThreads = 3;
  constexpr int kRounds = 300;
  constexpr size_t kMostLinesPerThread = 100000;
  LineCapture stays;
  LineCapture comes;
  LineCapture goes;
  auto toStays = Logger::addSink(stays, {Logger::INFO});
  std::atomic<bool> stop{false};
  std::atomic<size_t> logged{0};
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&stop, &logged, &running, t] {
      size_t i = 0;
      for (; !stop.load() && i < kMostLinesPerThread; ++i) LOG_WARN << "warn " << t << ' ' << i;
      logged.fetch_add(i);
      running.fetch_sub(1);
    });
  }
  bool stalled = false;  // no line reached the sink that stays
  for (int round = 0; round < kRounds && !stalled; ++round) {
    LogAttachment toComes = Logger::addSink(comes, {round % 3 ? Logger::TRACE : Logger::ERROR});
    LogAttachment toGoes = Logger::addSink(goes);
    // Some lines while both are attached.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    const size_t seen = stays.size();
    while (stays.size() < seen + 10 && running.load() > 0 && !stalled) {
      stalled = std::chrono::steady_clock::now() > deadline;
      std::this_thread::yield();
    }
    if (round % 2) {
      toComes.detach();
      toGoes.detach();
    } else {
      toGoes.detach();
      toComes.detach();
    }
  }
  stop.store(true);
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(stalled);
  EXPECT_EQ(stays.count("warn "), logged.load());
  EXPECT_LE(goes.count("warn "), logged.load());
  EXPECT_GT(goes.count("warn "), 0u);
}

// Death tests: two sinks that write to stderr, each marking its flushes.
void writeStderr(const std::string& text) {
  const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
  static_cast<void>(n);
}
struct StderrSink {
  const char* name;
  void append(const char* line, size_t len) {
    writeStderr(std::string(name) + ": " + std::string(line, len));
  }
  void flush() { writeStderr(std::string(name) + " flushed\n"); }
};

using LogSinksDeathTest = LogSinksTest;

TEST_F(LogSinksDeathTest, FatalWritesToEverySinkAndFlushesEachBeforeAborting) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StderrSink file{"file"};
        StderrSink console{"console"};
        auto toFile = Logger::addSink(file);
        auto toConsole = Logger::addSink(console, {Logger::ERROR});
        LOG_FATAL << "cannot go on";
      },
      ::testing::KilledBySignal(SIGABRT),
      "file: [^\n]* FATAL cannot go on - LogSinks_test\\.cc:[0-9]+\n"
      "console: [^\n]* FATAL cannot go on - LogSinks_test\\.cc:[0-9]+\n"
      "file flushed\nconsole flushed\n");
}

}  // namespace
