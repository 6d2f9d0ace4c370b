// LogRecord: what a sink with append(const LogRecord&) gets from Logger,
// field by field against the text line of the same statement.
#include "muon/base/LogRecord.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "RecordCapture.h"
#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

namespace muon {
namespace {

using muon::test::Got;
using muon::test::RecordCapture;

constexpr int64_t kNow = 1795248902123456;  // 2026-11-21 08:15:02.123456 UTC
std::atomic<int64_t> g_nowUs{kNow};
Timestamp fixedClock() { return Timestamp(g_nowUs.load()); }

int gettid() { return static_cast<int>(::syscall(SYS_gettid)); }

std::string tidField(int tid) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%5d ", tid);
  return buf;
}

// The line's layout, spelled out here from the fields.
std::string lineOf(const Got& g, const std::string& dateTime, const std::string& level) {
  return dateTime + tidField(g.tid) + level + (g.function.empty() ? "" : g.function + " ") +
         g.message + " - " + g.file + ":" + std::to_string(g.line) + "\n";
}

class LogRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_nowUs = kNow;
    Logger::setLogLevel(Logger::INFO);
    Logger::setClock(&fixedClock);
    Logger::setTimeZone(TimeZone());
  }
  void TearDown() override {
    Logger::setLogLevel(Logger::INFO);
    Logger::enableBacktrace(0);
    Logger::setClock(nullptr);
    Logger::setTimeZone(TimeZone());
  }

  RecordCapture sink_;
};

TEST_F(LogRecordTest, FieldsAgreeWithTheLine) {
  {
    auto attached = Logger::attach(sink_);
    LOG_WARN << "hello " << 42; const int line = __LINE__;
    std::vector<Got> got = sink_.records();
    ASSERT_EQ(got.size(), 1u);
    const Got& g = got[0];
    EXPECT_EQ(g.time, Timestamp(kNow));
    EXPECT_EQ(g.level, Logger::WARN);
    EXPECT_EQ(g.tid, gettid());
    EXPECT_EQ(g.file, "LogRecord_test.cc");
    EXPECT_EQ(g.line, line);
    EXPECT_EQ(g.function, "");
    EXPECT_EQ(g.message, "hello 42");
    EXPECT_EQ(g.text, lineOf(g, "20261121 08:15:02.123456Z ", "WARN  "));
    Logger::flush();
  }
  EXPECT_EQ(sink_.flushes(), 1);
}

TEST_F(LogRecordTest, TraceAndDebugRecordsNameTheirFunction) {
  Logger::setLogLevel(Logger::TRACE);
  auto attached = Logger::attach(sink_);
  LOG_DEBUG << "debugging";
  LOG_TRACE << "tracing";
  std::vector<Got> got = sink_.records();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].function, "TestBody");
  EXPECT_EQ(got[0].message, "debugging");
  EXPECT_EQ(got[0].text, lineOf(got[0], "20261121 08:15:02.123456Z ", "DEBUG "));
  EXPECT_EQ(got[1].function, "TestBody");
  EXPECT_EQ(got[1].level, Logger::TRACE);
  EXPECT_EQ(got[1].message, "tracing");
}

TEST_F(LogRecordTest, SyserrMessageEndsWithTheErrnoText) {
  auto attached = Logger::attach(sink_);
  errno = ENOENT;
  LOG_SYSERR << "open";
  std::vector<Got> got = sink_.records();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].level, Logger::ERROR);
  EXPECT_EQ(got[0].message, std::string("open: ") + strerror_tl(ENOENT) + " (errno=2)");
  EXPECT_EQ(got[0].text, lineOf(got[0], "20261121 08:15:02.123456Z ", "ERROR "));
}

TEST_F(LogRecordTest, AnOverlongMessageIsCutAsTheLineIs) {
  auto attached = Logger::attach(sink_);
  LOG_INFO << std::string(5000, 'x');
  std::vector<Got> got = sink_.records();
  ASSERT_EQ(got.size(), 1u);
  const std::string cut(LogStream::kCutMarker);
  const std::string trailer = " - " + got[0].file + ":" + std::to_string(got[0].line) + "\n";
  EXPECT_EQ(got[0].text.size(), LogStream::kMessageEnd + cut.size() + trailer.size());
  // The message keeps its fields, here the cut marker alone.
  EXPECT_EQ(got[0].message, std::string(got[0].message.size() - cut.size(), 'x') + cut);
  EXPECT_EQ(got[0].text, lineOf(got[0], "20261121 08:15:02.123456Z ", "INFO  "));
}

TEST_F(LogRecordTest, TheTimeIsTheInstantInAnyZone) {
  Logger::setTimeZone(TimeZone::fixed(8 * 3600, "UTC+8"));
  auto attached = Logger::attach(sink_);
  LOG_INFO << "local";
  std::vector<Got> got = sink_.records();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].time, Timestamp(kNow));
  EXPECT_EQ(got[0].text, lineOf(got[0], "20261121 16:15:02.123456 ", "INFO  "));
}

// A << operand that logs in the next second renews the thread's cached
// prefix; the outer record keeps the second its own line shows.
int logsInTheNextSecond() {
  g_nowUs = kNow + 1000000;
  LOG_INFO << "inner";
  return 7;
}

TEST_F(LogRecordTest, AnOperandThatLogsDoesNotChangeTheOuterRecordsTime) {
  auto attached = Logger::attach(sink_);
  LOG_INFO << "outer " << logsInTheNextSecond();
  std::vector<Got> got = sink_.records();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].message, "inner");
  EXPECT_EQ(got[0].time, Timestamp(kNow + 1000000));
  EXPECT_EQ(got[1].message, "outer 7");
  EXPECT_EQ(got[1].time, Timestamp(kNow));
  EXPECT_EQ(got[1].text, lineOf(got[1], "20261121 08:15:02.123456Z ", "INFO  "));
}

// Lines kept in the backtrace ring come out as the records they were, between
// two marker records that no statement wrote (no site).
TEST_F(LogRecordTest, BacktraceLinesArriveAsTheirOwnRecords) {
  Logger::enableBacktrace(4);
  auto attached = Logger::attach(sink_);
  LOG_DEBUG << "below";
  g_nowUs = kNow + 5;
  LOG_ERROR << "failed";
  std::vector<Got> got = sink_.records();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].level, Logger::ERROR);
  EXPECT_EQ(got[0].file, "");
  EXPECT_EQ(got[0].line, 0);
  EXPECT_EQ(got[0].message,
            "---- backtrace: the last 1 lines below the level, oldest first ----");
  EXPECT_EQ(got[0].text, "20261121 08:15:02.123461Z " + tidField(got[0].tid) + "ERROR " +
                             got[0].message + "\n");
  EXPECT_EQ(got[1].level, Logger::DEBUG);
  EXPECT_EQ(got[1].time, Timestamp(kNow));
  EXPECT_EQ(got[1].function, "TestBody");
  EXPECT_EQ(got[1].message, "below");
  EXPECT_EQ(got[1].text, lineOf(got[1], "20261121 08:15:02.123456Z ", "DEBUG "));
  EXPECT_EQ(got[2].message, "---- end of backtrace ----");
  EXPECT_EQ(got[3].message, "failed");
  EXPECT_EQ(got[3].time, Timestamp(kNow + 5));
}

// A sink with both forms of append() gets records.
struct BothForms {
  void append(const LogRecord&) { ++records; }
  void append(const char*, size_t) { ++lines; }
  void flush() {}
  int records = 0;
  int lines = 0;
};

TEST_F(LogRecordTest, ASinkWithBothFormsGetsRecords) {
  BothForms sink;
  {
    auto attached = Logger::attach(sink);
    LOG_INFO << "one";
  }
  EXPECT_EQ(sink.records, 1);
  EXPECT_EQ(sink.lines, 0);
}

TEST(StoredRecordTest, ARecordComesBackAsItWasStored) {
  const std::string text = "20261121 08:15:02.123456Z  4321 DEBUG fn message - a.cc:7\n";
  const std::string elsewhere = "other bytes";
  LogRecord r;
  r.time = Timestamp(kNow);
  r.level = Logger::DEBUG;
  r.tid = 4321;
  r.file = std::string_view(text).substr(51, 4);
  r.line = 7;
  r.function = std::string_view(elsewhere).substr(0, 5);  // not inside the text
  r.message = std::string_view(text).substr(41, 7);
  r.text = text;
  std::string stored(detail::storedSize(r), '\0');
  detail::storeRecord(r, stored.data());
  const LogRecord back = detail::loadRecord(stored.data());
  EXPECT_EQ(back.time, r.time);
  EXPECT_EQ(back.level, r.level);
  EXPECT_EQ(back.tid, r.tid);
  EXPECT_EQ(back.file, "a.cc");
  EXPECT_EQ(back.line, 7);
  EXPECT_EQ(back.function, "other");
  EXPECT_EQ(back.message, "message");
  EXPECT_EQ(back.text, text);
  // Views that lay inside the text are kept once, inside the stored text.
  EXPECT_EQ(back.message.data(), back.text.data() + 41);
}

}  // namespace
}  // namespace muon
