// The JSON encoder's two routes for a deferred record (RecordFormatter.h):
// straight from the recorded operands (encodeJsonOfOperands), and through
// the text line and its parts (encodeJson). Where the first writes a line,
// it must be the second's byte for byte; where it cannot promise that, it
// must decline.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "JsonRoutes.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/LogFields.h"
#include "muon/base/LogStream.h"
#include "muon/base/Logging.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LogSite.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/internal/RecordQueue.h"
#include "muon/base/internal/RecordQueues.h"

namespace {

using muon::LogStream;
using muon::kv;

struct Routes {
  std::string direct;
  std::string text;
  bool tookOperands;
};

muon::detail::LogSite g_site{__FILE__, __LINE__};

Routes bothRoutes(const std::function<void(LogStream&)>& operands,
                  int level = muon::Logger::INFO, const muon::detail::LogSite* site = &g_site) {
  LogStream stream;
  stream.startRecording([](void*, LogStream&) {}, nullptr);
  operands(stream);
  // 2026-11-21 08:15:02.123456 UTC
  const muon::test::RecordedStatement r(stream, level, 1795248902123456, site);
  const muon::test::JsonRoutes routes = muon::test::jsonRoutes(r);
  return Routes{routes.direct, routes.text, routes.written != 0};
}

// The statements the operands route takes.
TEST(JsonOfOperands, CommonStatementsAreWrittenStraightFromTheirOperands) {
  const std::vector<std::function<void(LogStream&)>> statements = {
      [](LogStream& s) { s << "hello world"; },
      [](LogStream& s) { s << "login" << kv("user", "alice") << kv("ms", 12) << kv("ratio", 0.5); },
      [](LogStream& s) {
        s << "int: " << 42 << " neg " << -7 << " u " << 7u << " ll " << 123456789012LL << " d "
          << 3.25 << " f " << 1.5f << " c " << 'x' << " p " << reinterpret_cast<void*>(0x1234)
          << " s " << std::string("str") << " b " << true;
      },
      [](LogStream& s) {
        s << "typed" << kv("ok", true) << kv("no", false) << kv("n", -3) << kv("u", 3u)
          << kv("big", 1e300) << kv("tiny", 1e-300) << kv("f", 2.5f);
      },
      [](LogStream& s) {
        s << "strings" << kv("number", "123") << kv("bool", "true") << kv("empty", "")
          << kv("spaced", "a b") << kv("eq", "a=b") << kv("dash", "-") << kv("dots", "a.b.c");
      },
      [](LogStream& s) {
        s << "reserved" << kv("message", "m") << kv("log.level", "x") << kv("log", 1)
          << kv("message.x", 2) << kv("process.thread.id", 4);
      },
      // A name longer than a field's is recorded cut, as the line shows it.
      [](LogStream& s) { s << "x" << kv(std::string(70, 'n'), 1); },
      [](LogStream& s) { s << kv("only", "fields") << kv("n", 1); },
      [](LogStream& s) { s << muon::Fmt("%d-%s", 7, "fmt") << kv("fmt", muon::Fmt("%.2f", 1.0)); },
      [](LogStream& s) { s << ""; },
  };
  for (size_t i = 0; i < statements.size(); ++i) {
    const Routes r = bothRoutes(statements[i]);
    EXPECT_TRUE(r.tookOperands) << "statement " << i << ": " << r.text;
    EXPECT_EQ(r.direct, r.text) << "statement " << i;
  }
  for (int level = muon::Logger::INFO; level < muon::detail::kLevelCount; ++level) {
    const Routes r = bothRoutes([](LogStream& s) { s << "at a level" << kv("k", 1); }, level);
    EXPECT_TRUE(r.tookOperands);
    EXPECT_EQ(r.direct, r.text) << "level " << level;
  }
}

// A floating-point field's text, bare in JSON where it is finite: the same
// bytes by both routes for doubles and floats of every kind of bit pattern
// (fixed and scientific, subnormal, -0, the largest, inf and nan).
TEST(JsonOfOperands, FloatingPointFieldsOfEveryShapeAreWrittenAsTheTextRouteWritesThem) {
  uint64_t state = 0x9e3779b97f4a7c15u;  // a fixed seed: the same values every run
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int direct = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = next();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    float f;
    const uint32_t low = static_cast<uint32_t>(bits);
    std::memcpy(&f, &low, sizeof f);
    // Every other double a short decimal, the kind most programs log.
    if (i % 2 == 1) d = static_cast<double>(static_cast<int64_t>(bits % 2000001) - 1000000) / 1000;
    const Routes r = bothRoutes([&](LogStream& s) { s << "x" << kv("d", d) << kv("f", f); });
    ASSERT_EQ(r.direct, r.text) << "double bits " << bits;
    direct += r.tookOperands ? 1 : 0;
  }
  EXPECT_GT(direct, 15000);  // the finite ones, nearly all
  for (const double d : {0.0, -0.0, 1e20, 1.5e-7, 5e-324, std::numeric_limits<double>::max()}) {
    const Routes r = bothRoutes([&](LogStream& s) { s << "x" << kv("d", d); });
    EXPECT_TRUE(r.tookOperands) << r.text;
    EXPECT_EQ(r.direct, r.text);
  }
}

// The site's file name and line number, which the short route copies from
// the site where the name needs no escape: the same bytes as the record's.
TEST(JsonOfOperands, TheSitesFileIsTheRecordsWhateverItsName) {
  static muon::detail::LogSite plain{"src/plain-name_1.cc", 7};
  static muon::detail::LogSite quoted{"src/we\"ird\\na\tme\x01.cc", 1234567};
  static muon::detail::LogSite high{"src/caf\xc3\xa9\x7f.cc", 0};
  static muon::detail::LogSite noFile{"src/", 42};
  for (const muon::detail::LogSite* site : {&plain, &quoted, &high, &noFile}) {
    const Routes r = bothRoutes([](LogStream& s) { s << "at a site" << kv("k", 1); },
                                muon::Logger::INFO, site);
    EXPECT_TRUE(r.tookOperands) << r.text;
    EXPECT_EQ(r.direct, r.text);
  }
  EXPECT_TRUE(plain.where.fileIsPlainJson);
  EXPECT_FALSE(quoted.where.fileIsPlainJson);
  EXPECT_FALSE(high.where.fileIsPlainJson);
}

// The statements it leaves to the text route, which still writes them.
TEST(JsonOfOperands, WhatItCannotPromiseGoesThroughTheTextLine) {
  const std::string longText(muon::detail::kMaxOperandsOfJson, 'x');
  const std::vector<std::function<void(LogStream&)>> statements = {
      [](LogStream& s) { s << "quote \" in the message"; },
      [](LogStream& s) { s << "backslash \\ in the message"; },
      [](LogStream& s) { s << "new\nline"; },
      [](LogStream& s) { s << "caf\xc3\xa9"; },
      [](LogStream& s) { s << "bad \xff byte"; },
      [](LogStream& s) { s << "a quote " << '"'; },
      [](LogStream& s) { s << "a backslash " << '\\'; },
      [](LogStream& s) { s << "a tab " << '\t'; },
      [](LogStream& s) { s << "x" << kv("quoted", "say \"hi\""); },
      [](LogStream& s) { s << "x" << kv("newline", "a\nb"); },
      [](LogStream& s) { s << "x" << kv("utf8", "caf\xc3\xa9"); },
      [](LogStream& s) { s << "x" << kv("inf", std::numeric_limits<double>::infinity()); },
      [](LogStream& s) { s << "x" << kv("nan", std::nan("")); },
      [](LogStream& s) { s << "x" << kv("-inf", -std::numeric_limits<double>::infinity()); },
      [](LogStream& s) { s << "x" << kv("finf", std::numeric_limits<float>::infinity()); },
      [](LogStream& s) { s << "x" << kv("fnan", std::nanf("")); },
      [](LogStream& s) { s << "x" << kv("bad name!", 1); },
      [](LogStream& s) { s << "x" << kv("", 1); },
      [](LogStream& s) { s << "x" << kv("@timestamp", 1); },
      [](LogStream& s) { s << "x" << kv("a", 1) << " then text"; },
      [&](LogStream& s) { s << longText; },
      [&](LogStream& s) { s << "x" << kv("long", longText); },
  };
  for (size_t i = 0; i < statements.size(); ++i) {
    const Routes r = bothRoutes(statements[i]);
    EXPECT_FALSE(r.tookOperands) << "statement " << i << ": " << r.text;
    EXPECT_EQ(r.direct, r.text) << "statement " << i;
  }
  // TRACE and DEBUG lines lead with the function's name.
  for (int level : {muon::Logger::TRACE, muon::Logger::DEBUG}) {
    const Routes r = bothRoutes([](LogStream& s) { s << "fn message"; }, level);
    EXPECT_FALSE(r.tookOperands);
    EXPECT_EQ(r.direct, r.text);
  }
}

constexpr int kCrowdedLines = 2000;

// The lines of a JSON AsyncLogging's file after `statement(i)` ran for i
// from 0 to kCrowdedLines - 1 before its backend started: the queue fills,
// and the statements after a quarter of it make their own lines. `line` is
// set to the statement's line; `crowded` to whether its queue crowded.
std::vector<std::string> crowdedLines(const std::function<void(int, int*)>& statement, int* line,
                                      bool* crowded) {
  muon::test::TempDir dir;
  *crowded = false;
  {
    muon::AsyncLogging::Options options;
    options.files.format = muon::LineFormat::kJson;
    options.policy = muon::AsyncLogging::kBlock;
    options.threadQueueBytes = muon::RecordQueues::kMinQueueBytes;
    muon::AsyncLogging log(dir.file("crowded"), 1 << 30, options);
    auto attached = muon::Logger::attach(log);
    for (int i = 0; i < kCrowdedLines; ++i) {
      statement(i, line);
      muon::detail::RecordQueue* queue = muon::detail::t_recordQueue.queue;
      *crowded = *crowded || (queue != nullptr && queue->crowded());
    }
    log.start();
    log.stop();
    EXPECT_EQ(log.stats().messagesDropped, 0u);
  }
  return muon::test::logLinesIn(dir);
}

// A statement whose queue is crowded makes its JSON line itself, from its
// operands (AsyncLogging::appendCrowded): the file has the lines the backend
// would have made, in order, none lost.
TEST(JsonOfOperands, ACrowdedStatementsLineIsTheLineTheBackendMakes) {
  constexpr int kLines = kCrowdedLines;
  bool crowded = false;
  int line = 0;
  const std::vector<std::string> lines = crowdedLines(
      [](int i, int* at) {
        LOG_INFO << "n=" << i << kv("user", "alice") << kv("i", i);
        *at = __LINE__ - 1;
      },
      &line, &crowded);
  ASSERT_TRUE(crowded) << "the queue never crowded: the test tests nothing";
  ASSERT_EQ(lines.size(), static_cast<size_t>(kLines));
  const std::string tid = std::to_string(muon::CurrentThread::tid());
  for (int i = 0; i < kLines; ++i) {
    const std::string rest = "\",\"log.level\":\"INFO\",\"process.thread.id\":" + tid +
                             ",\"message\":\"n=" + std::to_string(i) +
                             "\",\"log.origin.file.name\":\"JsonOfOperands_test.cc\"," +
                             "\"log.origin.file.line\":" + std::to_string(line) +
                             ",\"user\":\"alice\",\"i\":" + std::to_string(i) + "}";
    // {"@timestamp":"2026-11-21T08:15:02.123456Z, then the rest.
    ASSERT_EQ(lines[i].substr(0, 15), "{\"@timestamp\":\"") << lines[i];
    ASSERT_EQ(lines[i].substr(42), rest) << lines[i];
  }
}

// An operand the recorder does not store: the statement becomes a Logger
// (Statement::becomeLogger), whose stream records the operands.
struct Pair {
  int a;
  int b;
};
LogStream& operator<<(LogStream& s, const Pair& p) { return s << kv("a", p.a) << kv("b", p.b); }

// Microseconds since the epoch of a JSON line's @timestamp.
int64_t timestampOf(const std::string& line) {
  struct tm t {};
  int micro = 0;
  if (std::sscanf(line.c_str(), "{\"@timestamp\":\"%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &t.tm_year,
                  &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min, &t.tm_sec, &micro) != 7) {
    return -1;
  }
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<int64_t>(::timegm(&t)) * 1000000 + micro;
}

// A Logger that finds its queue crowded keeps recording, and the sink
// makes its JSON line from the operands (Logger::commitCrowded); one the
// short route declines (a quote in the message) becomes text as before.
// Either way: the lines the backend would have made, in order, with the
// time the statement began, none lost.
TEST(JsonOfOperands, ACrowdedLoggersLineIsTheLineTheBackendMakes) {
  constexpr int kLines = kCrowdedLines;
  bool crowded = false;
  int line = 0;
  const int64_t before = muon::Timestamp::now().microSecondsSinceEpoch();
  const std::vector<std::string> lines = crowdedLines(
      [](int i, int* at) {
        LOG_INFO << (i % 3 == 0 ? "q\"" : "n=") << i << Pair{i, -i};
        *at = __LINE__ - 1;
      },
      &line, &crowded);
  const int64_t after = muon::Timestamp::now().microSecondsSinceEpoch();
  ASSERT_TRUE(crowded) << "the queue never crowded: the test tests nothing";
  ASSERT_EQ(lines.size(), static_cast<size_t>(kLines));
  const std::string tid = std::to_string(muon::CurrentThread::tid());
  int64_t last = before;
  for (int i = 0; i < kLines; ++i) {
    const std::string rest = "\",\"log.level\":\"INFO\",\"process.thread.id\":" + tid +
                             ",\"message\":\"" + (i % 3 == 0 ? "q\\\"" : "n=") +
                             std::to_string(i) +
                             "\",\"log.origin.file.name\":\"JsonOfOperands_test.cc\"," +
                             "\"log.origin.file.line\":" + std::to_string(line) +
                             ",\"a\":" + std::to_string(i) + ",\"b\":" + std::to_string(-i) + "}";
    ASSERT_EQ(lines[i].substr(42), rest) << lines[i];
    // Its time is when it was logged: after the one before, before the end.
    const int64_t at = timestampOf(lines[i]);
    ASSERT_GE(at, last) << lines[i];
    ASSERT_LE(at, after) << lines[i];
    last = at;
  }
}

}  // namespace
