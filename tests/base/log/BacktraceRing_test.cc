// Logger::enableBacktrace: the ring of lines below the level (base/log/BacktraceRing.h).
#include "muon/base/internal/BacktraceRing.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "LineCapture.h"
#include "StderrLog.h"
#include "muon/base/Logging.h"

using muon::Logger;
using muon::test::LineCapture;

namespace {

int g_evaluated = 0;
int evaluated(int v) {
  ++g_evaluated;
  return v;
}

bool has(const std::string& line, const std::string& text) {
  return line.find(text) != std::string::npos;
}

class BacktraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Logger::setLogLevel(Logger::INFO);
    g_evaluated = 0;
  }
  void TearDown() override {
    Logger::enableBacktrace(0);
    Logger::setLogLevel(Logger::INFO);
  }

  LineCapture capture_;
  muon::LogAttachment attached_ = Logger::attach(capture_);
};

TEST_F(BacktraceTest, OffByDefaultLinesBelowTheLevelAreNeitherFormattedNorKept) {
  LOG_DEBUG << "below " << evaluated(1);
  LOG_ERROR << "error";
  EXPECT_EQ(g_evaluated, 0);
  std::vector<std::string> got = capture_.lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(has(got[0], "ERROR error"));
}

TEST_F(BacktraceTest, TheLastNLinesBelowTheLevelPrecedeTheNextErrorInOrderAndMarked) {
  Logger::enableBacktrace(3);
  for (int i = 1; i <= 5; ++i) LOG_DEBUG << "debug " << i;  // the ring wraps: 3, 4, 5 stay
  LOG_TRACE << "trace 6";                                    // 4, 5, 6
  LOG_INFO << "info";                                        // at the level: written now
  LOG_ERROR << "error";
  std::vector<std::string> got = capture_.lines();
  ASSERT_EQ(got.size(), 7u);
  EXPECT_TRUE(has(got[0], "INFO  info - BacktraceRing_test.cc:"));
  EXPECT_TRUE(has(got[1], "ERROR ---- backtrace: the last 3 lines below the level, oldest first ----"))
      << got[1];
  EXPECT_TRUE(has(got[2], "DEBUG ") && has(got[2], "debug 4 - BacktraceRing_test.cc:")) << got[2];
  EXPECT_TRUE(has(got[3], "debug 5 - ")) << got[3];
  EXPECT_TRUE(has(got[4], "TRACE ") && has(got[4], "trace 6 - ")) << got[4];
  EXPECT_TRUE(has(got[5], "ERROR ---- end of backtrace ----")) << got[5];
  EXPECT_TRUE(has(got[6], "ERROR error - ")) << got[6];

  // The ring was emptied: the next ERROR has no backtrace.
  LOG_ERROR << "again";
  got = capture_.lines();
  ASSERT_EQ(got.size(), 8u);
  EXPECT_TRUE(has(got[7], "ERROR again"));
}

TEST_F(BacktraceTest, ARingOfOneKeepsTheLastLineAndWarnIsNotATrigger) {
  Logger::enableBacktrace(1);
  LOG_DEBUG << "first";
  LOG_DEBUG << "second";
  LOG_WARN << "warn";
  LOG_ERROR << "error";
  std::vector<std::string> got = capture_.lines();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_TRUE(has(got[0], "WARN  warn"));
  EXPECT_TRUE(has(got[1], "the last 1 lines below the level"));
  EXPECT_TRUE(has(got[2], "second"));
  EXPECT_TRUE(has(got[4], "ERROR error"));
}

TEST_F(BacktraceTest, ARaisedLevelSendsItsFormerLinesToTheRing) {
  Logger::enableBacktrace(4);
  Logger::setLogLevel(Logger::ERROR);
  LOG_INFO << "info";
  LOG_WARN << "warn";
  LOG_SYSERR << "syserr";  // ERROR: at the level, and a trigger
  std::vector<std::string> got = capture_.lines();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_TRUE(has(got[1], "INFO  info"));
  EXPECT_TRUE(has(got[2], "WARN  warn"));
  EXPECT_TRUE(has(got[4], "ERROR syserr"));
}

TEST_F(BacktraceTest, TurningItOffDropsTheRingAndStopsFormatting) {
  Logger::enableBacktrace(8);
  LOG_DEBUG << "kept " << evaluated(1);
  EXPECT_EQ(g_evaluated, 1);
  Logger::enableBacktrace(0);
  LOG_DEBUG << "skipped " << evaluated(2);
  EXPECT_EQ(g_evaluated, 1);
  LOG_ERROR << "error";
  std::vector<std::string> got = capture_.lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(has(got[0], "ERROR error"));
}

TEST_F(BacktraceTest, RingTakeReturnsOldestFirstAfterWrapping) {
  muon::detail::backtraceResize(3);
  for (int i = 0; i < 10; ++i) {
    std::string line = "l" + std::to_string(i) + "\n";
    muon::detail::backtracePush(line.data(), line.size());
  }
  std::vector<std::string> got = muon::detail::backtraceTake();
  EXPECT_EQ(got, (std::vector<std::string>{"l7\n", "l8\n", "l9\n"}));
  EXPECT_TRUE(muon::detail::backtraceTake().empty());
  muon::detail::backtraceResize(0);
  muon::detail::backtracePush("x\n", 2);
  EXPECT_TRUE(muon::detail::backtraceTake().empty());
}

// Threads fill the ring while others log errors: every line comes out whole,
// once, and each thread's lines in the order it logged them.
TEST_F(BacktraceTest, ThreadsPushingWhileOthersTakeLoseNoOrder) {
  Logger::enableBacktrace(64);
  constexpr int kThreads = 3;
  constexpr int kLines = 3000;
  std::atomic<bool> done{false};
  std::thread errors([&] {
    while (!done.load()) LOG_ERROR << "trigger";
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kLines; ++i) LOG_DEBUG << "t" << t << " n" << i << " end";
    });
  }
  for (std::thread& th : threads) th.join();
  done = true;
  errors.join();
  int last[kThreads] = {-1, -1, -1};
  for (const std::string& line : capture_.lines()) {
    int t = -1;
    int n = -1;
    size_t at = line.find(" t");
    if (!has(line, "DEBUG") || at == std::string::npos) continue;
    ASSERT_EQ(std::sscanf(line.c_str() + at, " t%d n%d end", &t, &n), 2) << line;
    ASSERT_TRUE(t >= 0 && t < kThreads) << line;
    EXPECT_GT(n, last[t]) << line;
    last[t] = n;
  }
}

TEST(BacktraceDeathTest, FatalWritesTheRingFirst) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        muon::test::logToStderr();
        Logger::enableBacktrace(2);
        LOG_DEBUG << "what led up to it";
        CHECK_EQ(1, 2);
      },
      ::testing::KilledBySignal(SIGABRT),
      "FATAL ---- backtrace: the last 1 lines below the level, oldest first ----\n"
      ".* DEBUG .*what led up to it - BacktraceRing_test\\.cc:[0-9]+\n"
      ".*FATAL ---- end of backtrace ----\n"
      ".*FATAL Check failed: 1 == 2");
}

}  // namespace
