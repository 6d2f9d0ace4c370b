#include "muon/base/Timestamp.h"

#include <time.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include <gtest/gtest.h>

namespace muon {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// A value type that is cheap to pass by value across threads.
static_assert(std::is_trivially_copyable<Timestamp>::value, "Timestamp must stay trivially copyable");
static_assert(sizeof(Timestamp) == sizeof(int64_t), "Timestamp must stay one int64_t");
// Usable in constant initialization (no static-init order questions).
constexpr Timestamp kCompileTime = Timestamp::fromUnixTime(2, 5);

TEST(TimestampTest, DefaultIsTheInvalidEpoch) {
  Timestamp t;
  EXPECT_EQ(t.microSecondsSinceEpoch(), 0);
  EXPECT_EQ(t, Timestamp::invalid());
  EXPECT_FALSE(t.valid());
  EXPECT_TRUE(Timestamp(1).valid());
  // muduo's convention: only times after the epoch count as valid.
  EXPECT_FALSE(Timestamp(-1).valid());
}

TEST(TimestampTest, FromUnixTimeCombinesSecondsAndMicros) {
  Timestamp t = Timestamp::fromUnixTime(1795248902, 123456);
  EXPECT_EQ(t.microSecondsSinceEpoch(), 1795248902123456);
  EXPECT_EQ(t.secondsSinceEpoch(), 1795248902);
  EXPECT_EQ(t.microSecondsInSecond(), 123456);
  EXPECT_EQ(Timestamp::fromUnixTime(-3).microSecondsSinceEpoch(), -3000000);
  EXPECT_EQ(kCompileTime.microSecondsSinceEpoch(), 2000005);
}

// Before 1970 the split must floor, so the micro part stays in [0, 1e6) and a
// log line prints 23:59:59.999999 for -1 us, not a negative fraction.
TEST(TimestampTest, SplitFloorsNegativeTimes) {
  struct Case {
    int64_t us;
    int64_t seconds;
    int micros;
  };
  const Case cases[] = {
      {0, 0, 0},
      {1, 0, 1},
      {999999, 0, 999999},
      {1000000, 1, 0},
      {-1, -1, 999999},
      {-999999, -1, 1},
      {-1000000, -1, 0},
      {-1000001, -2, 999999},
      {kMax, 9223372036854, 775807},
      // The product seconds * 1e6 would overflow here (UBSan catches it).
      {kMin, -9223372036855, 224192},
      {kMin + 1, -9223372036855, 224193},
  };
  for (const Case& c : cases) {
    Timestamp t(c.us);
    EXPECT_EQ(t.secondsSinceEpoch(), c.seconds) << c.us;
    EXPECT_EQ(t.microSecondsInSecond(), c.micros) << c.us;
  }
}

TEST(TimestampTest, ToStringIsSecondsDotMicros) {
  EXPECT_EQ(Timestamp(1795248902123456).toString(), "1795248902.123456");
  EXPECT_EQ(Timestamp(0).toString(), "0.000000");
  EXPECT_EQ(Timestamp(7).toString(), "0.000007");
  EXPECT_EQ(Timestamp(kMax).toString(), "9223372036854.775807");
}

// Regression: the floor split printed -1 us as "-1.999999", which reads back
// as almost two seconds before the epoch.
TEST(TimestampTest, ToStringOfNegativeTimeReadsBackAsTheSameValue) {
  EXPECT_EQ(Timestamp(-1).toString(), "-0.000001");
  EXPECT_EQ(Timestamp(-500000).toString(), "-0.500000");
  EXPECT_EQ(Timestamp(-1000000).toString(), "-1.000000");
  EXPECT_EQ(Timestamp(-1500000).toString(), "-1.500000");
  EXPECT_EQ(Timestamp(kMin).toString(), "-9223372036854.775808");
}

TEST(TimestampTest, ToFormattedStringIsUtcCalendarTime) {
  Timestamp t(1795248902123456);  // 2026-11-21 08:15:02.123456 UTC
  EXPECT_EQ(t.toFormattedString(), "20261121 08:15:02.123456");
  EXPECT_EQ(t.toFormattedString(false), "20261121 08:15:02");
  EXPECT_EQ(Timestamp(0).toFormattedString(), "19700101 00:00:00.000000");
  EXPECT_EQ(Timestamp(-1).toFormattedString(), "19691231 23:59:59.999999");
  EXPECT_EQ(Timestamp::fromUnixTime(951782400).toFormattedString(false), "20000229 00:00:00");
  EXPECT_EQ(Timestamp::fromUnixTime(2147483648).toFormattedString(false), "20380119 03:14:08");
}

TEST(TimestampTest, ComparisonsFollowTheMicroseconds) {
  Timestamp a(-5);
  Timestamp b(3);
  Timestamp b2(3);
  EXPECT_TRUE(a < b);
  EXPECT_FALSE(b < a);
  EXPECT_FALSE(b < b2);
  EXPECT_TRUE(b > a);
  EXPECT_FALSE(a > b);
  EXPECT_TRUE(a <= b);
  EXPECT_TRUE(b <= b2);
  EXPECT_FALSE(b <= a);
  EXPECT_TRUE(b >= a);
  EXPECT_TRUE(b >= b2);
  EXPECT_FALSE(a >= b);
  EXPECT_TRUE(b == b2);
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(a != b);
  EXPECT_FALSE(b != b2);
}

TEST(TimestampTest, TimeDifferenceIsSignedSeconds) {
  Timestamp low(1000000);
  Timestamp high(3500000);
  EXPECT_DOUBLE_EQ(timeDifference(high, low), 2.5);
  EXPECT_DOUBLE_EQ(timeDifference(low, high), -2.5);
  EXPECT_DOUBLE_EQ(timeDifference(Timestamp(1), Timestamp(0)), 1e-6);
}

TEST(TimestampTest, AddTimeMovesBothWays) {
  Timestamp t = Timestamp::fromUnixTime(100);
  EXPECT_EQ(addTime(t, 1.5).microSecondsSinceEpoch(), 101500000);
  EXPECT_EQ(addTime(t, -100.25).microSecondsSinceEpoch(), -250000);
  EXPECT_EQ(addTime(t, 0.000001).microSecondsSinceEpoch(), 100000001);
}

// Regression: addTime truncated seconds * 1e6, and 2.097148 * 1e6 is
// 2097147.9999999998, so a microsecond was lost (for about 3% of the values
// of this sweep).
TEST(TimestampTest, AddTimeRoundsToTheNearestMicrosecond) {
  EXPECT_EQ(addTime(Timestamp(0), 2.097148).microSecondsSinceEpoch(), 2097148);
  EXPECT_EQ(addTime(Timestamp(0), -2.097148).microSecondsSinceEpoch(), -2097148);
  for (int64_t us = -3000000; us <= 3000000; us += 7) {
    double seconds = static_cast<double>(us) / 1e6;
    ASSERT_EQ(addTime(Timestamp(0), seconds).microSecondsSinceEpoch(), us) << seconds;
  }
}

TEST(TimestampTest, NowReadsTheRealtimeClockInMicroseconds) {
  struct timespec before;
  struct timespec after;
  ::clock_gettime(CLOCK_REALTIME, &before);
  Timestamp now = Timestamp::now();
  ::clock_gettime(CLOCK_REALTIME, &after);
  const int64_t lo = static_cast<int64_t>(before.tv_sec) * 1000000 + before.tv_nsec / 1000;
  const int64_t hi = static_cast<int64_t>(after.tv_sec) * 1000000 + after.tv_nsec / 1000;
  // A second of slack either way keeps a wall-clock step from failing the
  // test, while milli- or nanosecond units would still miss by far.
  EXPECT_GE(now.microSecondsSinceEpoch(), lo - 1000000);
  EXPECT_LE(now.microSecondsSinceEpoch(), hi + 1000000);
}

}  // namespace
}  // namespace muon
