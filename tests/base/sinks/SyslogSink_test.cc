// SyslogSink against a real rsyslogd that each test starts itself
// (tests/support/Rsyslogd.h): UNIX datagram, UDP and TCP, a daemon killed
// and restarted, a full queue. ctest label `syslog`; each test that needs the
// daemon skips, saying why, where rsyslogd cannot run.
#include "muon/base/SyslogSink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "LineCapture.h"
#include "Rsyslogd.h"
#include "UnixDatagramReceiver.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/LogRecord.h"
#include "muon/base/SyslogFormat.h"
#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

using muon::Logger;
using muon::LogRecord;
using muon::SyslogOptions;
using muon::SyslogSink;
using muon::test::Rsyslogd;

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

#define START_OR_SKIP(daemon)                                      \
  do {                                                             \
    std::string why;                                               \
    if (!(daemon).start(&why)) GTEST_SKIP() << "no rsyslogd: " << why; \
  } while (0)

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class SyslogSinkTest : public ::testing::Test {
 protected:
  void SetUp() override { Logger::setLogLevel(Logger::TRACE); }
  void TearDown() override { Logger::setLogLevel(Logger::INFO); }
};

// A record as Logger makes it for
//   LOG_<level> << "disk full";   (df.cc:42, thread 4321, at 2026-11-21 08:15:02.123456 UTC)
LogRecord recordAt(Logger::LogLevel level, const std::string& text) {
  LogRecord r;
  r.time = muon::Timestamp(1795248902123456);
  r.level = level;
  r.tid = 4321;
  r.file = "df.cc";
  r.line = 42;
  r.message = "disk full";
  r.text = text;
  return r;
}

TEST(SyslogFormat, LevelsBecomeSeveritiesAndTheTimeIsTheRecordsInUtc) {
  struct Case {
    Logger::LogLevel level;
    const char* name;
    int pri;  // facility 1 (user) * 8 + severity
  };
  const Case cases[] = {{Logger::TRACE, "TRACE", 15}, {Logger::DEBUG, "DEBUG", 15},
                        {Logger::INFO, "INFO ", 14},  {Logger::WARN, "WARN ", 12},
                        {Logger::ERROR, "ERROR", 11}, {Logger::FATAL, "FATAL", 10}};
  for (const Case& c : cases) {
    EXPECT_EQ(SyslogSink::format(recordAt(c.level, ""), 1, "host", "app", 99),
              "<" + std::to_string(c.pri) + ">1 2026-11-21T08:15:02.123456Z host app 99 - - 4321 " +
                  c.name + " disk full - df.cc:42");
  }
}

TEST(SyslogFormat, MsgIsTheLineAfterItsDateTime) {
  // What Logger wrote in UTC+8, with the function's name of a DEBUG line:
  // MSG is that line from the thread id on, the time is the record's in UTC.
  const std::string text = "20261121 16:15:02.123456  4321 DEBUG main disk full - df.cc:42\n";
  LogRecord r = recordAt(Logger::DEBUG, text);
  r.function = std::string_view(text).substr(37, 4);
  r.message = std::string_view(text).substr(42, 9);
  EXPECT_EQ(SyslogSink::format(r, 16, "h", "my app", 7),
            "<135>1 2026-11-21T08:15:02.123456Z h my_app 7 - - " + text.substr(26, text.size() - 27));
  // A record without a site (the backtrace ring's markers) has no trailer.
  LogRecord marker = recordAt(Logger::ERROR, "");
  marker.file = std::string_view();
  marker.line = 0;
  marker.message = "---- end of backtrace ----";
  EXPECT_EQ(SyslogSink::format(marker, 1, "h", "a", 7),
            "<11>1 2026-11-21T08:15:02.123456Z h a 7 - - 4321 ERROR ---- end of backtrace ----");
}

TEST(SyslogFormat, LinesNotFromLoggerAreSentWholeAndStampedByTheDaemon) {
  std::string foreign = "not a muon line\n";
  EXPECT_EQ(SyslogSink::format(foreign.data(), foreign.size(), 1, "", "a", 7),
            "<13>1 - - a 7 - - not a muon line");
  // Text is not parsed, even when it looks like a muon line.
  std::string local = "20261121 16:15:02.123456 4321 WARN  x - a.cc:1\n";
  EXPECT_EQ(SyslogSink::format(local.data(), local.size(), 16, "h", "my app", 7),
            "<133>1 - h my_app 7 - - 20261121 16:15:02.123456 4321 WARN  x - a.cc:1");
}

TEST(SyslogFormat, AFileLineGivesTheSameMessageAsItsRecord) {
  // What a shipper reads back from a file (rfc5424::formatLine) is what
  // SyslogSink sends for the record: the local time read in the line's zone.
  const muon::TimeZone utc8 = muon::TimeZone::fixed(8 * 3600, "UTC+8");
  const std::string text = "20261121 16:15:02.123456  4321 DEBUG main disk full - df.cc:42\n";
  LogRecord r = recordAt(Logger::DEBUG, text);
  r.function = std::string_view(text).substr(37, 4);
  r.message = std::string_view(text).substr(42, 9);
  EXPECT_EQ(muon::rfc5424::formatLine(text, 16, "h", "my app", 7, utc8),
            SyslogSink::format(r, 16, "h", "my app", 7));
  // A line in UTC says so ('Z'), whatever the zone.
  EXPECT_EQ(muon::rfc5424::formatLine("20261121 08:15:02.000001Z  12 WARN  x - a.cc:1", 1, "h",
                                      "a", 7, utc8),
            "<12>1 2026-11-21T08:15:02.000001Z h a 7 - - 12 WARN  x - a.cc:1");
  // Anything else goes whole, stamped by the daemon.
  EXPECT_EQ(muon::rfc5424::formatLine("not a muon line\n", 1, "h", "a", 7, utc8),
            "<13>1 - h a 7 - - not a muon line");
}

TEST(SyslogFormat, FieldsGoIntoStructuredData) {
  const muon::TimeZone utc;
  const std::string name(40, 'n');
  const std::string text = "20261121 08:15:02.000001Z    12 INFO  login user=alice ms=12 "
                           "q=\"a \\\"b\\\" ] \\\\ \\n\" " + name + "=1 - a.cc:1\n";
  const std::string expected =
      "<14>1 2026-11-21T08:15:02.000001Z h a 7 - [muon@32473 user=\"alice\" ms=\"12\" "
      "q=\"a \\\"b\\\" \\] \\\\ \\n\" " + std::string(32, 'n') + "=\"1\"] 12 INFO  login user=alice";
  const std::string line = muon::rfc5424::formatLine(text, 1, "h", "a", 7, utc);
  EXPECT_EQ(line.compare(0, expected.size(), expected), 0) << line;
  // SyslogSink, from the record of the same line: the same STRUCTURED-DATA.
  LogRecord r = recordAt(Logger::INFO, text);
  r.time = muon::Timestamp(1795248902000001);
  r.tid = 12;
  r.file = "a.cc";
  r.line = 1;
  r.message = std::string_view(text).substr(38, text.size() - 38 - 10);
  r.fields = r.message.substr(r.message.find(" user="));
  EXPECT_EQ(SyslogSink::format(r, 1, "h", "a", 7), line);
  // The record's fields are the statement's kv operands, not words of its
  // text: with none, the same message has no STRUCTURED-DATA.
  r.fields = std::string_view();
  EXPECT_EQ(SyslogSink::format(r, 1, "h", "a", 7).find("[muon@"), std::string::npos);
  // No fields: NILVALUE, as before.
  EXPECT_EQ(muon::rfc5424::structuredData("just words a=b c"), "");
}

// A JSON log file's line is shipped as the text line of the same statement
// is: its own time, severity, thread, MSG and STRUCTURED-DATA (it was sent
// whole, severity notice, no time, no STRUCTURED-DATA).
TEST(SyslogFormat, AJsonLineGivesTheSameMessageAsItsTextLine) {
  const muon::TimeZone utc8 = muon::TimeZone::fixed(8 * 3600, "UTC+8");
  struct Case {
    Logger::LogLevel level;
    const char* head;     // the text line up to its function or message, in UTC+8
    const char* function;
    const char* message;  // the fields included
    const char* fields;   // the statement's fields: the message's tail
  };
  const Case cases[] = {
      {Logger::INFO, "20261121 16:15:02.123456  4321 INFO  ", "", "login user=alice ms=12",
       " user=alice ms=12"},
      // Quoted values, text that reads as a number, a bool, a reserved name
      // (JSON's "fields.message"), a function's name.
      {Logger::DEBUG, "20261121 16:15:02.123456  4321 DEBUG ", "main",
       "quoted q=\"a \\\"b\\\" ]\\n\" id=\"12\" ok=true message=m",
       " q=\"a \\\"b\\\" ]\\n\" id=\"12\" ok=true message=m"},
      {Logger::ERROR, "20261121 16:15:02.123456  4321 ERROR ", "", "no fields", ""},
  };
  for (const Case& c : cases) {
    LogRecord r = recordAt(c.level, "");
    r.function = c.function;
    r.message = c.message;
    r.fields = r.message.substr(r.message.size() - std::strlen(c.fields));
    const std::string text = std::string(c.head) + (r.function.empty() ? "" : std::string(c.function) + " ") +
                             c.message + " - df.cc:42\n";
    std::string json;
    muon::detail::appendEncoded(muon::detail::encoderFor(muon::LineFormat::kJson), r, &json);
    const std::string fromText = muon::rfc5424::formatLine(text, 1, "h", "a", 7, utc8);
    EXPECT_EQ(fromText, SyslogSink::format(r, 1, "h", "a", 7));
    EXPECT_EQ(muon::rfc5424::formatLine(json, 1, "h", "a", 7, utc8), fromText) << json;
  }
  // A JSON line wrapping a line not in muon's layout: that line, as from a
  // text file.
  EXPECT_EQ(muon::rfc5424::formatLine("{\"message\":\"not a muon line\"}\n", 1, "h", "a", 7, utc8),
            "<13>1 - h a 7 - - not a muon line");
  // JSON that muon does not write goes whole, as any foreign line.
  EXPECT_EQ(muon::rfc5424::formatLine("{\"message\":null}", 1, "h", "a", 7, utc8),
            "<13>1 - h a 7 - - {\"message\":null}");
}

muon::Timestamp fixedClock() { return muon::Timestamp(1795248902123456); }

// With the line in local time the message still carries the instant, in UTC
// (the record has it); MSG is the line after its date-time, byte for byte.
TEST_F(SyslogSinkTest, TheTimeIsSentInUtcWhenLinesAreInLocalTime) {
  muon::test::UnixDatagramReceiver daemon;
  ASSERT_TRUE(daemon.bound());
  SyslogOptions options;
  options.path = daemon.path();
  options.hostname = "host";
  options.appName = "app";
  Logger::setClock(&fixedClock);
  Logger::setTimeZone(muon::TimeZone::fixed(8 * 3600, "UTC+8"));
  auto logDiskFull = [] { LOG_WARN << "disk full"; };
  muon::test::LineCapture lines;
  std::string sent;
  {
    SyslogSink sink(options);
    {
      auto attached = Logger::attach(sink);
      logDiskFull();
      Logger::flush();
      sent = daemon.receive();
    }
    auto attached = Logger::attach(lines);
    logDiskFull();
  }
  Logger::setTimeZone(muon::TimeZone());
  Logger::setClock(nullptr);
  ASSERT_EQ(lines.size(), 1u);
  const std::string line = lines.last();
  ASSERT_EQ(line.substr(0, 25), "20261121 16:15:02.123456 ") << line;
  const size_t tid = line.find_first_not_of(' ', 25);
  EXPECT_EQ(sent, "<12>1 2026-11-21T08:15:02.123456Z host app " + std::to_string(::getpid()) +
                      " - - " + line.substr(tid, line.size() - 1 - tid));
}

// Logs one line per level through `options` and checks what rsyslogd got.
void expectEachLevelArrives(Rsyslogd& daemon, SyslogOptions options) {
  const std::string app = options.appName;
  {
    SyslogSink sink(options);
    auto attached = Logger::attach(sink);
    LOG_TRACE << "a trace";
    LOG_DEBUG << "a debug";
    LOG_INFO << "an info";
    LOG_WARN << "a warning";
    LOG_ERROR << "an error";
    Logger::flush();
    EXPECT_EQ(sink.stats().sent, 5u);
    EXPECT_EQ(sink.stats().lost + sink.stats().dropped, 0u);
  }
  ASSERT_TRUE(daemon.waitFor(app, 5, seconds(10))) << daemon.received(app).size();
  std::vector<std::string> got = daemon.received(app);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_TRUE(got[0].rfind("7 ", 0) == 0 && has(got[0], "TRACE ") && has(got[0], "a trace - SyslogSink_test.cc:")) << got[0];
  EXPECT_TRUE(got[1].rfind("7 ", 0) == 0 && has(got[1], "a debug")) << got[1];
  EXPECT_TRUE(got[2].rfind("6 ", 0) == 0 && has(got[2], "INFO  an info")) << got[2];
  EXPECT_TRUE(got[3].rfind("4 ", 0) == 0 && has(got[3], "WARN  a warning")) << got[3];
  EXPECT_TRUE(got[4].rfind("3 ", 0) == 0 && has(got[4], "ERROR an error")) << got[4];
}

// Each transport, as its name in rsyslogd's output (the APP-NAME).
class SyslogTransportTest : public SyslogSinkTest,
                            public ::testing::WithParamInterface<SyslogOptions::Transport> {};

TEST_P(SyslogTransportTest, LinesArriveWithTheirSeverities) {
  Rsyslogd daemon;
  START_OR_SKIP(daemon);
  SyslogOptions options;
  options.transport = GetParam();
  options.path = daemon.unixSocket();
  options.port = GetParam() == SyslogOptions::kUdp ? daemon.udpPort() : daemon.tcpPort();
  options.appName = "muon-transport-" + std::to_string(GetParam());
  expectEachLevelArrives(daemon, options);
}

std::string transportName(const ::testing::TestParamInfo<SyslogOptions::Transport>& param) {
  switch (param.param) {
    case SyslogOptions::kUnixDatagram: return "UnixDatagram";
    case SyslogOptions::kUdp: return "Udp";
    case SyslogOptions::kTcp: return "Tcp";
  }
  return "Unknown";
}

INSTANTIATE_TEST_SUITE_P(Transports, SyslogTransportTest,
                         ::testing::Values(SyslogOptions::kUnixDatagram, SyslogOptions::kUdp,
                                           SyslogOptions::kTcp),
                         transportName);

// rsyslogd is killed while the sink is connected, lines are logged while it
// is down, and it comes back on the same port: the sink reconnects, counts
// what it lost, reports it, and no logging thread waited meanwhile.
TEST_F(SyslogSinkTest, TcpReconnectsAfterTheDaemonIsKilledAndCountsWhatItLost) {
  Rsyslogd daemon;
  START_OR_SKIP(daemon);
  SyslogOptions options;
  options.transport = SyslogOptions::kTcp;
  options.port = daemon.tcpPort();
  options.appName = "muon-restart";
  options.firstRetryMs = 20;
  options.maxRetryMs = 100;
  SyslogSink sink(options);
  auto attached = Logger::attach(sink);

  for (int i = 0; i < 50; ++i) LOG_INFO << "before " << i;
  ASSERT_TRUE(daemon.waitFor(options.appName, 50, seconds(10)));

  daemon.kill();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i) LOG_INFO << "during " << i;
  auto appendTime = std::chrono::steady_clock::now() - start;
  // Only queue pushes: far below one reconnect back-off or TCP timeout.
  EXPECT_LT(appendTime, milliseconds(500));
  Logger::flush();  // the sender meets the dead daemon, or the timeout passes

  START_OR_SKIP(daemon);
  // The first lines after the restart may still meet the old connection's
  // end; log until one arrives, then a known batch.
  for (int i = 0; !daemon.waitFor(options.appName, 51, milliseconds(50)); ++i) {
    ASSERT_LT(i, 200) << "nothing arrived after the restart";
    LOG_INFO << "probe " << i;
  }
  for (int i = 0; i < 100; ++i) LOG_INFO << "after " << i;
  Logger::flush();
  // The last one: the batch follows a probe that arrived, on its connection,
  // in order. (A count of 151 lines came early when two probes arrived.)
  ASSERT_TRUE(daemon.waitForLine(options.appName, "INFO  after 99 ", seconds(10)));

  std::vector<std::string> got = daemon.received(options.appName);
  size_t after = 0;
  size_t during = 0;
  size_t reports = 0;
  for (const std::string& line : got) {
    after += has(line, "INFO  after ");
    during += has(line, "INFO  during ");
    if (has(line, "lines dropped (queue full) and")) {
      ++reports;
      EXPECT_EQ(line.rfind("4 ", 0), 0u) << "a warning: " << line;
    }
  }
  SyslogSink::Stats stats = sink.stats();
  EXPECT_EQ(after, 100u);
  EXPECT_GE(stats.reconnects, 1u);
  EXPECT_GT(stats.lost + stats.dropped, 0u);
  // A line logged while the daemon was down was sent late or counted, never both
  // nor twice; lines the kernel took before the kill can vanish uncounted.
  EXPECT_LE(during + stats.lost + stats.dropped, 2000u + 50u + 200u);
  EXPECT_GE(reports, 1u);
}

TEST_F(SyslogSinkTest, AFullQueueDropsAndCountsInsteadOfWaiting) {
  Rsyslogd daemon;  // its socket path, never started: nobody listens
  SyslogOptions options;
  options.path = daemon.unixSocket();
  options.appName = "muon-full";
  options.queueCapacity = 10;
  options.firstRetryMs = 60000;  // the sender sleeps after its first failure
  options.flushTimeoutMs = 100;
  SyslogSink sink(options);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) sink.append("x\n", 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(500));
  SyslogSink::Stats stats = sink.stats();
  EXPECT_GE(stats.dropped, 1000u - 10u - 10u);  // the sender took a few before sleeping
  EXPECT_EQ(stats.sent, 0u);
  start = std::chrono::steady_clock::now();
  sink.flush();  // bounded by flushTimeoutMs
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
}

}  // namespace
