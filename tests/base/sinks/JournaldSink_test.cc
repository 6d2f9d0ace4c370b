// JournaldSink against a real systemd-journald that each test starts in a
// mount namespace of its own (Journald.h; label journal), and its encoder
// (JournalFormat.h) byte for byte.
#include "muon/base/JournaldSink.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "Journald.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/LogFields.h"
#include "muon/base/LogRecord.h"
#include "muon/base/Logging.h"
#include "muon/base/internal/JournalFormat.h"

namespace {

using muon::JournaldOptions;
using muon::JournaldSink;
using muon::Logger;
using muon::test::Journald;

// ---- the encoder -------------------------------------------------------------

TEST(JournalFormat, FieldNamesAreUpperCasedAndKeptOffJournaldsOwn) {
  EXPECT_EQ(muon::journal::fieldName("trace.id"), "TRACE_ID");
  EXPECT_EQ(muon::journal::fieldName("user-Name"), "USER_NAME");
  EXPECT_EQ(muon::journal::fieldName("_hidden"), "HIDDEN");
  EXPECT_EQ(muon::journal::fieldName("__"), "FIELDS_");
  EXPECT_EQ(muon::journal::fieldName("2fa"), "FIELDS_2FA");
  EXPECT_EQ(muon::journal::fieldName("message"), "FIELDS_MESSAGE");
  EXPECT_EQ(muon::journal::fieldName("priority"), "FIELDS_PRIORITY");
  EXPECT_EQ(muon::journal::fieldName("caf\xc3\xa9"), "CAF__");
  EXPECT_EQ(muon::journal::fieldName(std::string(100, 'a')), std::string(64, 'A'));
}

TEST(JournalFormat, ValuesWithNewlinesOrBinaryBytesGoLengthPrefixed) {
  std::string out;
  muon::journal::appendField("A", "plain text\tand caf\xc3\xa9", &out);
  EXPECT_EQ(out, "A=plain text\tand caf\xc3\xa9\n");
  for (const std::string& value : {std::string("two\nlines"), std::string("bad \xff utf-8"),
                                  std::string("nul \0 byte", 10)}) {
    out.clear();
    muon::journal::appendField("B", value, &out);
    std::string expected = "B\n";
    uint64_t n = value.size();
    for (int i = 0; i < 8; ++i, n >>= 8) expected += static_cast<char>(n & 0xff);
    expected += value + "\n";
    EXPECT_EQ(out, expected);
  }
}

TEST(JournalFormat, ARecordsEntry) {
  const std::string text = "20261121 08:15:02.123456Z  4321 WARN  disk full free=0 - df.cc:42\n";
  muon::LogRecord r;
  r.time = muon::Timestamp(1795248902123456);
  r.level = Logger::WARN;
  r.tid = 4321;
  r.file = "df.cc";
  r.line = 42;
  r.message = std::string_view(text).substr(38, 16);
  r.fields = r.message.substr(9);
  r.text = text;
  std::string entry;
  muon::journal::encodeRecord(r, "server", &entry);
  EXPECT_EQ(entry,
            "MESSAGE=disk full\nPRIORITY=4\nSYSLOG_IDENTIFIER=server\n"
            "SYSLOG_TIMESTAMP=2026-11-21T08:15:02.123456Z\nTID=4321\nCODE_FILE=df.cc\n"
            "CODE_LINE=42\nFREE=0\n");
  muon::journal::encodeLine("not from Logger\n", "server", &entry);
  EXPECT_EQ(entry, "MESSAGE=not from Logger\nPRIORITY=5\nSYSLOG_IDENTIFIER=server\n");
}

// ---- against a private journald ----------------------------------------------

class JournaldSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!journald_.start(&why)) {
      if (Journald::required() && !journald_.namespaceRefused()) FAIL() << "no private journald: " << why;
      GTEST_SKIP() << "no private journald: " << why;
    }
  }
  JournaldOptions options() const {
    JournaldOptions o;
    o.socketPath = journald_.socketPath();
    o.identifier = identifier_;
    return o;
  }
  // This test's entries, in order.
  std::vector<nlohmann::json> entries() const { return journald_.entries(identifier_); }
  bool waitFor(size_t n) const { return journald_.waitFor(identifier_, n, std::chrono::seconds(20)); }

  Journald journald_;
  const std::string identifier_ = "muon-test-" + std::to_string(::getpid());
};

__attribute__((noinline)) int logDebugLine() {
  LOG_DEBUG << "in a function";
  return __LINE__ - 1;
}

TEST_F(JournaldSinkTest, EveryFieldIsReadBackByJournalctl) {
  const Logger::LogLevel level = Logger::logLevel();
  Logger::setLogLevel(Logger::TRACE);
  int warnLine = 0;
  int debugLine = 0;
  {
    JournaldSink sink(options());
    auto attached = Logger::attach(sink);
    {
      muon::LogContext context{{"span.id", "00f067aa0ba902b7"}};
      LOG_WARN << "disk full" << muon::kv("trace.id", "4bf92f3577b34da6a3ce929d0e0e4736")
               << muon::kv("free", 0) << muon::kv("_hidden", "x") << muon::kv("message", "m");
      warnLine = __LINE__ - 2;
    }
    debugLine = logDebugLine();
    sink.flush();
    EXPECT_EQ(sink.stats().sent, 2u);
    EXPECT_EQ(sink.stats().lost + sink.stats().dropped, 0u);
  }
  Logger::setLogLevel(level);
  ASSERT_TRUE(waitFor(2));
  const std::vector<nlohmann::json> e = entries();
  ASSERT_EQ(e.size(), 2u);
  const nlohmann::json& w = e[0];
  EXPECT_EQ(w.at("MESSAGE"), "disk full");
  EXPECT_EQ(w.at("PRIORITY"), "4");
  EXPECT_EQ(w.at("SYSLOG_IDENTIFIER"), identifier_);
  EXPECT_EQ(w.at("CODE_FILE"), "JournaldSink_test.cc");
  EXPECT_EQ(w.at("CODE_LINE"), std::to_string(warnLine));
  EXPECT_EQ(w.at("TID"), std::to_string(muon::CurrentThread::tid()));
  EXPECT_EQ(w.at("TRACE_ID"), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(w.at("SPAN_ID"), "00f067aa0ba902b7");
  EXPECT_EQ(w.at("FREE"), "0");
  EXPECT_EQ(w.at("HIDDEN"), "x");
  EXPECT_EQ(w.at("FIELDS_MESSAGE"), "m");
  EXPECT_FALSE(w.contains("CODE_FUNC"));
  // The statement's time, RFC 3339 in UTC, within a minute of journald's own.
  const std::string stamp = w.at("SYSLOG_TIMESTAMP");
  ASSERT_EQ(stamp.size(), 27u) << stamp;
  EXPECT_EQ(stamp.back(), 'Z');
  const int64_t received = std::stoll(w.at("__REALTIME_TIMESTAMP").get<std::string>());
  EXPECT_LT(std::llabs(received / 1000000 - muon::Timestamp::now().secondsSinceEpoch()), 60);
  const nlohmann::json& d = e[1];
  EXPECT_EQ(d.at("MESSAGE"), "in a function");
  EXPECT_EQ(d.at("PRIORITY"), "7");
  EXPECT_EQ(d.at("CODE_FUNC"), "logDebugLine");
  EXPECT_EQ(d.at("CODE_LINE"), std::to_string(debugLine));
}

TEST_F(JournaldSinkTest, AsyncLoggingForwardsItsDeferredLinesWithTheirFields) {
  muon::test::TempDir dir;
  int line = 0;
  {
    JournaldSink sink(options());
    muon::AsyncLogging log(dir.file("forward"), 1 << 30);
    auto forwarded = log.forward(sink);
    auto attached = Logger::attach(log);
    log.start();
    {
      muon::LogContext context{{"span.id", "00f067aa0ba902b7"}};
      LOG_ERROR << "refused" << muon::kv("port", 443);
      line = __LINE__ - 1;
    }
    log.flush();  // the file's lines, then the journal's
    EXPECT_EQ(sink.stats().sent, 1u);
  }
  ASSERT_TRUE(waitFor(1));
  const std::vector<nlohmann::json> e = entries();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].at("MESSAGE"), "refused");
  EXPECT_EQ(e[0].at("PRIORITY"), "3");
  EXPECT_EQ(e[0].at("CODE_FILE"), "JournaldSink_test.cc");
  EXPECT_EQ(e[0].at("CODE_LINE"), std::to_string(line));
  EXPECT_EQ(e[0].at("PORT"), "443");
  EXPECT_EQ(e[0].at("SPAN_ID"), "00f067aa0ba902b7");
  EXPECT_EQ(e[0].at("TID"), std::to_string(muon::CurrentThread::tid()));
}

// A record of `message`, as a sink gets it.
muon::LogRecord recordOf(std::string_view message) {
  muon::LogRecord r;
  r.time = muon::Timestamp::now();
  r.level = Logger::INFO;
  r.tid = muon::CurrentThread::tid();
  r.file = "JournaldSink_test.cc";
  r.line = 1;
  r.message = message;
  return r;
}

// Whole, without printing megabytes when not.
#define EXPECT_SAME_BYTES(a, b) \
  EXPECT_TRUE((a) == (b)) << "sizes " << (a).size() << " and " << (b).size()

TEST_F(JournaldSinkTest, LargeMessagesBinaryValuesAndLooseLinesArriveWhole) {
  // Longer than a statement's line may be: records a sink is given.
  const std::string large(100 * 1024, 'x');
  const std::string huge = std::string(1024 * 1024, 'y') + "end";  // more than a datagram takes
  const std::string lines = "first\nsecond\n";
  const std::string invalid = "bad \xff\xfe utf-8";
  uint64_t viaMemfd = 0;
  {
    JournaldSink sink(options());
    sink.append(recordOf(large));
    sink.append(recordOf(huge));
    auto attached = Logger::attach(sink);
    LOG_INFO << "values" << muon::kv("lines", lines) << muon::kv("invalid", invalid);
    LOG_INFO << invalid;
    sink.append("a loose line\n", 13);
    sink.flush();
    EXPECT_EQ(sink.stats().sent, 5u);
    EXPECT_EQ(sink.stats().lost, 0u);
    viaMemfd = sink.stats().viaMemfd;
  }
  EXPECT_EQ(viaMemfd, 1u);
  ASSERT_TRUE(waitFor(5));
  const std::vector<nlohmann::json> e = entries();
  ASSERT_EQ(e.size(), 5u);
  EXPECT_SAME_BYTES(Journald::bytesOf(e[0].at("MESSAGE")), large);
  EXPECT_SAME_BYTES(Journald::bytesOf(e[1].at("MESSAGE")), huge);
  EXPECT_EQ(Journald::bytesOf(e[2].at("LINES")), lines);
  EXPECT_EQ(Journald::bytesOf(e[2].at("INVALID")), invalid);
  EXPECT_EQ(Journald::bytesOf(e[3].at("MESSAGE")), invalid);
  EXPECT_EQ(e[4].at("MESSAGE"), "a loose line");
  EXPECT_EQ(e[4].at("PRIORITY"), "5");
}

// journald killed (kill -9) and started again: lines logged while it is
// gone are lost and counted exactly, reported once, and lines after the
// restart arrive.
TEST_F(JournaldSinkTest, KilledAndRestartedLosesExactlyWhatItsAbsenceCost) {
  constexpr int kBefore = 100, kWhileDown = 500, kAfter = 100;
  ::testing::internal::CaptureStderr();
  JournaldOptions o = options();
  o.retryMs = 20;
  JournaldSink sink(o);
  auto attached = Logger::attach(sink);
  for (int i = 0; i < kBefore; ++i) LOG_INFO << "before " << i;
  sink.flush();
  ASSERT_TRUE(waitFor(kBefore));  // read by journald: none left in its socket
  journald_.kill();
  for (int i = 0; i < kWhileDown; ++i) LOG_INFO << "while down " << i;
  sink.flush();
  EXPECT_EQ(sink.stats().lost, static_cast<uint64_t>(kWhileDown));
  std::string why;
  ASSERT_TRUE(journald_.start(&why)) << why;
  for (int i = 0; i < kAfter; ++i) LOG_INFO << "after " << i;
  sink.flush();
  const JournaldSink::Stats s = sink.stats();
  EXPECT_EQ(s.sent, static_cast<uint64_t>(kBefore + kAfter));
  EXPECT_EQ(s.lost, static_cast<uint64_t>(kWhileDown));
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.outages, 1u);
  ASSERT_TRUE(waitFor(kBefore + kAfter + 1));
  int before = 0, down = 0, after = 0, reports = 0;
  for (const nlohmann::json& j : entries()) {
    const std::string m = Journald::bytesOf(j.at("MESSAGE"));
    if (m.rfind("before ", 0) == 0) ++before;
    if (m.rfind("while down ", 0) == 0) ++down;
    if (m.rfind("after ", 0) == 0) ++after;
    if (m.rfind("muon: ", 0) == 0) {
      ++reports;
      EXPECT_EQ(m, "muon: 500 log lines did not reach journald (0 dropped by a full queue, 500 "
                   "lost while journald did not take them)");
      EXPECT_EQ(j.at("PRIORITY"), "4");
    }
  }
  EXPECT_EQ(before, kBefore);
  EXPECT_EQ(down, 0);
  EXPECT_EQ(after, kAfter);
  EXPECT_EQ(reports, 1);
  const std::string text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(text.find("does not take log entries"), text.rfind("does not take log entries")) << text;
  EXPECT_NE(text.find("does not take log entries"), std::string::npos) << text;
}

// journald restarted between two lines: the connection to the old one is
// replaced at once and the second line is not lost.
TEST_F(JournaldSinkTest, RestartedBetweenTwoLinesLosesNeither) {
  JournaldSink sink(options());
  auto attached = Logger::attach(sink);
  LOG_INFO << "first";
  sink.flush();
  ASSERT_TRUE(waitFor(1));
  journald_.kill();
  std::string why;
  ASSERT_TRUE(journald_.start(&why)) << why;
  LOG_INFO << "second";
  sink.flush();
  EXPECT_EQ(sink.stats().sent, 2u);
  EXPECT_EQ(sink.stats().lost, 0u);
  EXPECT_EQ(sink.stats().outages, 0u);
  ASSERT_TRUE(waitFor(2));
  EXPECT_EQ(entries().back().at("MESSAGE"), "second");
}

// A journald that does not read (SIGSTOP): the callers never wait for it
// (the test would hang), and every line is sent, dropped or lost, counted;
// what was sent is what journald has once it reads again.
TEST_F(JournaldSinkTest, AStoppedJournaldNeverBlocksTheCaller) {
  constexpr int kLines = 20000;
  ::testing::internal::CaptureStderr();
  JournaldOptions o = options();
  o.queueCapacity = 1000;
  o.sendTimeoutMs = 50;
  o.retryMs = 10;
  JournaldSink::Stats s;
  {
    JournaldSink sink(o);
    auto attached = Logger::attach(sink);
    journald_.pause();
    for (int i = 0; i < kLines; ++i) LOG_INFO << "stalled " << i;
    sink.flush();
    s = sink.stats();
    journald_.resume();
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(s.sent + s.dropped + s.lost, static_cast<uint64_t>(kLines));
  EXPECT_GT(s.dropped + s.lost, 0u);
  ASSERT_TRUE(waitFor(s.sent));
  size_t stalled = 0;
  for (const nlohmann::json& j : entries()) {
    if (Journald::bytesOf(j.at("MESSAGE")).rfind("stalled ", 0) == 0) ++stalled;
  }
  EXPECT_EQ(stalled, s.sent);
}

// MUON_LOG_JOURNAL=1 makes the journal the program's output; unset, 0 or
// anything else leaves the output alone (anything else said on stderr).
TEST_F(JournaldSinkTest, MuonLogJournalSwitchesTheOutputToTheJournal) {
  const char* before = std::getenv("MUON_LOG_JOURNAL");
  const std::string saved = before ? before : "";
  ::unsetenv("MUON_LOG_JOURNAL");
  EXPECT_FALSE(muon::useJournalIfRequested(options()).active());
  ::setenv("MUON_LOG_JOURNAL", "0", 1);
  EXPECT_FALSE(muon::useJournalIfRequested(options()).active());
  ::setenv("MUON_LOG_JOURNAL", "yes please", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(muon::useJournalIfRequested(options()).active());
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("MUON_LOG_JOURNAL='yes please' is neither 1 nor 0"), std::string::npos) << said;
  ::setenv("MUON_LOG_JOURNAL", "1", 1);
  {
    muon::RequestedJournal journal = muon::useJournalIfRequested(options());
    ASSERT_TRUE(journal.active());
    LOG_WARN << "to the journal" << muon::kv("via", "env");
    journal.sink()->flush();
    EXPECT_EQ(journal.sink()->stats().sent, 1u);
  }
  if (before) {
    ::setenv("MUON_LOG_JOURNAL", saved.c_str(), 1);
  } else {
    ::unsetenv("MUON_LOG_JOURNAL");
  }
  ASSERT_TRUE(waitFor(1));
  const std::vector<nlohmann::json> e = entries();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].at("MESSAGE"), "to the journal");
  EXPECT_EQ(e[0].at("PRIORITY"), "4");
  EXPECT_EQ(e[0].at("VIA"), "env");
}

TEST(JournaldSink, NoJournaldCountsEveryLineLostAndSaysSoOnce) {
  ::testing::internal::CaptureStderr();
  JournaldOptions o;
  o.socketPath = "/nonexistent/muon-journal-socket";
  o.retryMs = 5;
  JournaldSink sink(o);
  for (int i = 0; i < 100; ++i) sink.append("x\n", 2);
  sink.flush();
  const JournaldSink::Stats s = sink.stats();
  EXPECT_EQ(s.lost, 100u);
  EXPECT_EQ(s.sent, 0u);
  EXPECT_EQ(s.outages, 1u);
  const std::string text = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(text.find("journald at /nonexistent/muon-journal-socket does not take log entries (No "
                      "such file or directory)"),
            std::string::npos)
      << text;
}

}  // namespace
