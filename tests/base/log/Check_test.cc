// CHECK, CHECK_op, CHECK_NOTNULL, PCHECK, DCHECK (base/log/Check.h).
#include "muon/base/internal/Check.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "StderrLog.h"
#include "muon/base/Logging.h"

using muon::Logger;
using muon::test::logToStderrMarkingFlushes;

// Check_ndebug.cc: failing DCHECKs compiled with NDEBUG; how many operands ran.
int dcheckOperandsEvaluatedUnderNdebug();

namespace {

int g_calls = 0;
int counted(int v) {
  ++g_calls;
  return v;
}

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    g_calls = 0;
  }
};
using CheckDeathTest = CheckTest;

TEST_F(CheckTest, PassingChecksWriteNothingAndEvaluateEachOperandOnce) {
  CHECK(counted(1) == 1) << "context " << counted(0);
  CHECK_EQ(counted(2), 2);
  CHECK_NE(counted(2), 3);
  CHECK_LT(counted(2), 3);
  CHECK_LE(counted(3), 3);
  CHECK_GT(counted(4), 3);
  CHECK_GE(counted(3), counted(3));
  PCHECK(counted(1) == 1);
  EXPECT_EQ(g_calls, 9);  // the << context of a passing check does not run
}

TEST_F(CheckTest, MixedSignednessComparesByValueWithoutACast) {
  std::vector<int> v(3);
  CHECK_EQ(v.size(), 3);
  CHECK_LT(-1, 1u);  // -1 < 1u is false for the built-in operator
  CHECK_GT(1u, -1);
  CHECK_NE(-1, ~0u);
  CHECK_LE(-5L, 0ul);
  CHECK_GE(0ul, -5L);
}

TEST_F(CheckTest, CheckNotNullReturnsItsArgument) {
  int x = 7;
  int* p = &x;
  EXPECT_EQ(CHECK_NOTNULL(p), &x);
  auto owned = std::make_unique<int>(8);
  EXPECT_EQ(*CHECK_NOTNULL(owned), 8);
  g_calls = 0;
  EXPECT_EQ(CHECK_NOTNULL((++g_calls, p)), &x);
  EXPECT_EQ(g_calls, 1);
}

TEST_F(CheckTest, UnbracedIfElseBindsToTheUsersIf) {
  bool reached = false;
  if (false)
    CHECK_EQ(1, 2);
  else
    reached = true;
  EXPECT_TRUE(reached);
  reached = false;
  if (false)
    CHECK(false) << "never";
  else
    reached = true;
  EXPECT_TRUE(reached);
}

TEST_F(CheckDeathTest, CheckWritesAFatalLineWithTheConditionAndContextFlushesAndAborts) {
  EXPECT_EXIT(
      {
        logToStderrMarkingFlushes();
        int fd = -1;
        CHECK(fd >= 0) << "socket for " << "peer";
      },
      ::testing::KilledBySignal(SIGABRT),
      "FATAL Check failed: fd >= 0 socket for peer - Check_test\\.cc:[0-9]+\n<flushed after the line>\n");
}

TEST_F(CheckDeathTest, ALevelAboveFatalDoesNotSilenceIt) {
  EXPECT_EXIT(
      {
        logToStderrMarkingFlushes();
        Logger::setLogLevel(Logger::FATAL);
        CHECK(1 + 1 == 3);
      },
      ::testing::KilledBySignal(SIGABRT), "FATAL Check failed: 1 \\+ 1 == 3");
}

TEST_F(CheckDeathTest, CheckOpPrintsBothValuesEvaluatedOnce) {
  EXPECT_EXIT(
      {
        logToStderrMarkingFlushes();
        int i = 0;
        CHECK_EQ(++i, 5) << "i is " << i;
      },
      ::testing::KilledBySignal(SIGABRT),
      "FATAL Check failed: \\+\\+i == 5 \\(1 vs\\. 5\\) i is 1 - Check_test\\.cc:[0-9]+\n<flushed after the line>\n");
  const char* expected[] = {"1 != 1 \\(1 vs\\. 1\\)", "2 < 1 \\(2 vs\\. 1\\)",
                            "2 <= 1 \\(2 vs\\. 1\\)", "1 > 2 \\(1 vs\\. 2\\)",
                            "1 >= 2 \\(1 vs\\. 2\\)"};
  EXPECT_EXIT({ logToStderrMarkingFlushes(); CHECK_NE(1, 1); }, ::testing::KilledBySignal(SIGABRT),
              expected[0]);
  EXPECT_EXIT({ logToStderrMarkingFlushes(); CHECK_LT(2, 1); }, ::testing::KilledBySignal(SIGABRT),
              expected[1]);
  EXPECT_EXIT({ logToStderrMarkingFlushes(); CHECK_LE(2, 1); }, ::testing::KilledBySignal(SIGABRT),
              expected[2]);
  EXPECT_EXIT({ logToStderrMarkingFlushes(); CHECK_GT(1, 2); }, ::testing::KilledBySignal(SIGABRT),
              expected[3]);
  EXPECT_EXIT({ logToStderrMarkingFlushes(); CHECK_GE(1, 2); }, ::testing::KilledBySignal(SIGABRT),
              expected[4]);
}

enum class Color { kRed = 1, kBlue = 2 };

TEST_F(CheckDeathTest, CheckOpPrintsStringsPointersAndEnums) {
  EXPECT_EXIT(
      {
        logToStderrMarkingFlushes();
        std::string a = "left";
        CHECK_EQ(a, std::string("right"));
      },
      ::testing::KilledBySignal(SIGABRT), "\\(left vs\\. right\\)");
  EXPECT_EXIT(
      {
        logToStderrMarkingFlushes();
        CHECK_EQ(Color::kRed, Color::kBlue);
      },
      ::testing::KilledBySignal(SIGABRT), "\\(1 vs\\. 2\\)");
  EXPECT_EXIT(
      {
        logToStderrMarkingFlushes();
        int x = 0;
        CHECK_EQ(&x, nullptr);
      },
      ::testing::KilledBySignal(SIGABRT), "\\(0x[0-9a-f]+ vs\\. \\(null\\)\\)");
}

TEST_F(CheckDeathTest, CheckNotNullNamesTheExpression) {
  EXPECT_EXIT(
      {
        logToStderrMarkingFlushes();
        int* missing = nullptr;
        int* p = CHECK_NOTNULL(missing);
        (void)p;
      },
      ::testing::KilledBySignal(SIGABRT),
      "FATAL 'missing' must be non NULL - Check_test\\.cc:[0-9]+\n<flushed after the line>\n");
}

TEST_F(CheckDeathTest, PCheckAppendsErrnoAsItWasWhenTheCheckFailed) {
  EXPECT_EXIT(
      {
        logToStderrMarkingFlushes();
        PCHECK(::close(-1) == 0) << "close " << (errno = 0);
      },
      ::testing::KilledBySignal(SIGABRT),
      "FATAL Check failed: ::close\\(-1\\) == 0 close 0: Bad file descriptor \\(errno=9\\) - "
      "Check_test\\.cc:[0-9]+\n<flushed after the line>\n");
}

TEST_F(CheckTest, DChecksUnderNdebugEvaluateNothing) {
  EXPECT_EQ(dcheckOperandsEvaluatedUnderNdebug(), 0);
}

TEST_F(CheckDeathTest, DChecksWithoutNdebugAreChecks) {
  DCHECK(counted(1) == 1);
  DCHECK_EQ(counted(1), 1);
  EXPECT_EQ(g_calls, 2);
  EXPECT_EXIT({ logToStderrMarkingFlushes(); DCHECK_GT(1, 2) << "ctx"; }, ::testing::KilledBySignal(SIGABRT),
              "FATAL Check failed: 1 > 2 \\(1 vs\\. 2\\) ctx");
  EXPECT_EXIT({ logToStderrMarkingFlushes(); DCHECK(false); }, ::testing::KilledBySignal(SIGABRT),
              "FATAL Check failed: false");
}

}  // namespace
