// LOG_IF, LOG_EVERY_N, LOG_FIRST_N, LOG_EVERY_T (base/log/RateLimit.h).
#include "muon/base/internal/RateLimit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "LineCapture.h"
#include "muon/base/Logging.h"

using muon::Logger;
using muon::Timestamp;

namespace {

std::atomic<int64_t> g_nowUs{0};
Timestamp fixedClock() { return Timestamp(g_nowUs.load()); }

// The N of "[N suppressed] " in a line, 0 if it has none.
uint64_t suppressedIn(const std::string& line) {
  size_t at = line.find('[');
  unsigned long long n = 0;
  if (at == std::string::npos || std::sscanf(line.c_str() + at, "[%llu suppressed] ", &n) != 1) {
    return 0;
  }
  return n;
}

int g_evaluations = 0;
int evaluated() { return ++g_evaluations; }

class RateLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_evaluations = 0;
    g_nowUs = 1795248902000000;
    Logger::setLogLevel(Logger::INFO);
    Logger::setClock(&fixedClock);
  }
  void TearDown() override {
    Logger::setLogLevel(Logger::INFO);
    Logger::setClock(nullptr);
  }
  std::vector<std::string> lines() const { return capture_.lines(); }

  muon::test::LineCapture capture_;
  muon::LogAttachment attached_ = Logger::attach(capture_);
};

TEST_F(RateLimitTest, LogIfWritesOnlyWhenTheConditionHoldsAndEvaluatesItOnce) {
  LOG_IF(INFO, evaluated() == 1) << "yes";
  LOG_IF(INFO, evaluated() == 1) << "no " << evaluated();
  EXPECT_EQ(g_evaluations, 2);  // the second's << operand did not run
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("INFO  yes - RateLimit_test.cc:"), std::string::npos) << got[0];
}

TEST_F(RateLimitTest, ADisabledLevelRunsNeitherConditionNorLimiter) {
  LOG_IF(DEBUG, evaluated() > 0) << "debug";
  EXPECT_EQ(g_evaluations, 0);
  for (int i = 0; i < 5; ++i) {
    Logger::setLogLevel(i < 4 ? Logger::INFO : Logger::DEBUG);
    // Four disabled calls do not count: the fifth is the site's first.
    LOG_EVERY_N(DEBUG, 3) << "call " << i;
  }
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("call 4"), std::string::npos);
  EXPECT_EQ(suppressedIn(got[0]), 0u);
}

TEST_F(RateLimitTest, EveryNWritesCallsOneNPlusOneAndSaysHowManyWereSuppressed) {
  for (int i = 1; i <= 10; ++i) LOG_EVERY_N(INFO, 3) << "call " << i;
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 4u);
  const char* expected[] = {"INFO  call 1 -", "INFO  [2 suppressed] call 4 -",
                            "INFO  [2 suppressed] call 7 -", "INFO  [2 suppressed] call 10 -"};
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NE(got[i].find(expected[i]), std::string::npos) << got[i];
  }
}

TEST_F(RateLimitTest, EveryNOfOneWritesEveryCallAndZeroOrLessNone) {
  for (int i = 0; i < 5; ++i) LOG_EVERY_N(INFO, 1) << "one";
  for (int i = 0; i < 5; ++i) LOG_EVERY_N(INFO, 0) << "zero";
  for (int i = 0; i < 5; ++i) LOG_EVERY_N(INFO, -2) << "negative";
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 5u);
  for (const std::string& line : got) {
    EXPECT_NE(line.find("INFO  one -"), std::string::npos) << line;
  }
}

TEST_F(RateLimitTest, FirstNWritesTheFirstNCallsOnly) {
  for (int i = 1; i <= 5; ++i) LOG_FIRST_N(WARN, 2) << "call " << i;
  for (int i = 1; i <= 5; ++i) LOG_FIRST_N(WARN, 1) << "single " << i;
  for (int i = 1; i <= 5; ++i) LOG_FIRST_N(WARN, 0) << "none " << i;
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_NE(got[0].find("WARN  call 1 -"), std::string::npos) << got[0];
  EXPECT_NE(got[1].find("WARN  call 2 -"), std::string::npos) << got[1];
  EXPECT_NE(got[2].find("WARN  single 1 -"), std::string::npos) << got[2];
}

void everySecond(int i) { LOG_EVERY_T(ERROR, 1.0) << "tick " << i; }

TEST_F(RateLimitTest, EveryTWritesOncePerIntervalOnTheLoggersClock) {
  everySecond(1);                 // t = 0: the first call writes
  g_nowUs += 400000;
  everySecond(2);                 // t = 0.4 s
  everySecond(3);
  g_nowUs += 599999;
  everySecond(4);                 // t = 0.999999 s: still inside
  g_nowUs += 1;
  everySecond(5);                 // t = 1 s: writes, three were suppressed
  g_nowUs -= 3600LL * 1000000;    // the clock steps back an hour
  everySecond(6);                 // writes: not silent for an hour
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_NE(got[0].find("ERROR tick 1 -"), std::string::npos) << got[0];
  EXPECT_NE(got[1].find("ERROR [3 suppressed] tick 5 -"), std::string::npos) << got[1];
  EXPECT_NE(got[2].find("ERROR tick 6 -"), std::string::npos) << got[2];
}

TEST_F(RateLimitTest, EveryTOfZeroSecondsWritesEveryCall) {
  for (int i = 0; i < 4; ++i) LOG_EVERY_T(INFO, 0) << "each";
  EXPECT_EQ(lines().size(), 4u);
}

TEST_F(RateLimitTest, UnbracedIfElseBindsToTheUsersIf) {
  bool taken = false;
  if (taken)
    LOG_EVERY_N(INFO, 1) << "then";
  else
    LOG_FIRST_N(INFO, 1) << "else";
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("else"), std::string::npos);
}

constexpr int kThreads = 8;
constexpr int kCallsPerThread = 20000;

template <typename Body>
void race(Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
      }
      for (int i = 0; i < kCallsPerThread; ++i) body();
    });
  }
  for (std::thread& th : threads) th.join();
}

TEST_F(RateLimitTest, ThreadsRacingOnOneEveryNSiteGetExactlyEveryNthCall) {
  const uint64_t n = 7;
  const uint64_t calls = uint64_t{kThreads} * kCallsPerThread;
  race([] { LOG_EVERY_N(INFO, 7) << "raced"; });
  std::vector<std::string> got = lines();
  const uint64_t written = (calls + n - 1) / n;
  ASSERT_EQ(got.size(), written);
  uint64_t suppressed = 0;
  for (const std::string& line : got) suppressed += suppressedIn(line);
  // Every call is either written or counted once in a later line, except
  // the calls after the last written one.
  EXPECT_EQ(suppressed, (written - 1) * (n - 1));
}

TEST_F(RateLimitTest, ThreadsRacingOnOneFirstNSiteGetExactlyN) {
  race([] { LOG_FIRST_N(INFO, 100) << "raced"; });
  EXPECT_EQ(lines().size(), 100u);
}

TEST_F(RateLimitTest, ThreadsRacingOnOneEveryTSiteCountEverySuppressedCallOnce) {
  auto site = [] { LOG_EVERY_T(INFO, 10) << "raced"; };
  race(site);  // the clock stands still: one line
  ASSERT_EQ(lines().size(), 1u);
  g_nowUs += 10 * 1000000;
  site();
  std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 2u);
  // Calls suppressed while the first writer was between its check and its
  // note may be counted in its own line; none is counted twice or lost.
  EXPECT_EQ(suppressedIn(got[0]) + suppressedIn(got[1]), uint64_t{kThreads} * kCallsPerThread - 1)
      << got[0] << got[1];
}

}  // namespace
