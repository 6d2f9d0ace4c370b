// JsonLines: text lines as JSON lines, checked with a real JSON parser
// (nlohmann::json), through every path that writes a file: SyncLogging,
// AsyncLogging's backend (deferred records) and a crash-safe recovery.
#include "muon/base/JsonLines.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/LogFile.h"
#include "muon/base/Logging.h"
#include "muon/base/StdoutSink.h"
#include "muon/base/SyncLogging.h"
#include "muon/base/TimeZone.h"

namespace muon {
namespace {

using nlohmann::json;
using test::logLinesIn;
using test::readLines;
using test::TempDir;

std::string toJson(const std::string& line) {
  std::string out;
  detail::appendJsonLine(line, TimeZone(), detail::FieldsInText::kRead, &out);
  return out;
}

TEST(JsonLines, ALineBecomesOneObjectWithEcsNames) {
  EXPECT_EQ(toJson("20261121 08:15:02.123456Z  4321 INFO  login user=alice ms=12 - auth.cc:42\n"),
            "{\"@timestamp\":\"2026-11-21T08:15:02.123456Z\",\"log.level\":\"INFO\","
            "\"process.thread.id\":4321,\"message\":\"login\",\"log.origin.file.name\":\"auth.cc\","
            "\"log.origin.file.line\":42,\"user\":\"alice\",\"ms\":12}\n");
}

TEST(JsonLines, TypesFollowTheLogfmtForm) {
  const json j = json::parse(toJson(
      "20261121 08:15:02.123456Z     7 DEBUG fn msg a=1 b=-2.5e+3 c=true d=\"12\" e=nan f=inf "
      "g=0x1f h=\"x y\" i=1e999 - f.cc:1"));
  EXPECT_EQ(j.at("log.origin.function"), "fn");
  EXPECT_EQ(j.at("message"), "msg");
  EXPECT_TRUE(j.at("a").is_number_integer());
  EXPECT_EQ(j.at("b"), -2500.0);
  EXPECT_EQ(j.at("c"), true);
  EXPECT_EQ(j.at("d"), "12");
  EXPECT_EQ(j.at("e"), "nan");
  EXPECT_EQ(j.at("f"), "inf");
  EXPECT_EQ(j.at("g"), "0x1f");
  EXPECT_EQ(j.at("h"), "x y");
  EXPECT_EQ(j.at("i"), "1e999");
}

TEST(JsonLines, AFieldNamedLikeAKeyIsKeptUnderAPrefix) {
  const json j = json::parse(toJson(
      "20261121 08:15:02.123456Z     7 INFO  real message=fake log.level=x log=y "
      "process.thread.id.x=1 - f.cc:1"));
  EXPECT_EQ(j.at("message"), "real");
  EXPECT_EQ(j.at("log.level"), "INFO");
  EXPECT_EQ(j.at("fields.message"), "fake");
  EXPECT_EQ(j.at("fields.log.level"), "x");
  EXPECT_EQ(j.at("fields.log"), "y");
  EXPECT_EQ(j.at("fields.process.thread.id.x"), 1);
}

TEST(JsonLines, InvalidUtf8BecomesTheReplacementCharacter) {
  std::string out;
  detail::appendJsonString(std::string("ok \xc3\xa9 \xff \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \x01\x7f"), &out);
  EXPECT_EQ(out, "\"ok \xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
                 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \\u0001\\u007f\"");
  EXPECT_NO_THROW(json::parse(out));
}

TEST(JsonLines, EveryByteThatNeedsEscapingIsFoundWhereverItStands) {
  // The escaper passes over clean bytes many at a time: a byte to escape at
  // each place of strings of every length up to three blocks must be found.
  for (size_t len = 1; len <= 48; ++len) {
    for (size_t at = 0; at < len; ++at) {
      for (char c : {'"', '\\', '\x01', '\x7f', '\xff'}) {
        std::string in(len, 'a');
        in[at] = c;
        std::string out;
        detail::appendJsonString(in, &out);
        const json j = json::parse(out);
        const std::string back = j.get<std::string>();
        EXPECT_EQ(back, c == '\xff' ? std::string(in).replace(at, 1, "\xef\xbf\xbd") : in)
            << len << " " << at << " " << static_cast<int>(c);
      }
    }
  }
}

TEST(JsonLines, ALineNotInMuonsLayoutIsKeptWholeAsTheMessage) {
  const json j = json::parse(toJson("Dropped log messages at x, 1 larger buffers (2 messages)\n"));
  EXPECT_EQ(j.at("message"), "Dropped log messages at x, 1 larger buffers (2 messages)");
  EXPECT_EQ(j.size(), 1u);
}

TEST(JsonLines, ALocalTimeIsWrittenInUtc) {
  std::string out;
  detail::appendJsonLine("20261121 16:15:02.000001  4321 WARN  x - f.cc:3",
                         TimeZone::fixed(8 * 3600, "UTC+8"), detail::FieldsInText::kRead, &out);
  EXPECT_EQ(json::parse(out)["@timestamp"], "2026-11-21T08:15:02.000001Z");
}

// ---- read back (readJsonLine) ----------------------------------------------

// A text line, made JSON and read back, gives the text line's parts: the
// message and its fields as the text line holds them.
TEST(JsonLines, AJsonLineReadsBackIntoTheTextLinesParts) {
  const TimeZone utc;
  const std::string texts[] = {
      "20261121 08:15:02.123456Z  4321 INFO  login user=alice ms=12 - auth.cc:42",
      "20261121 08:15:02.000001Z     7 DEBUG fn msg a=1 b=-2.5e+3 c=true d=\"12\" e=nan f=inf "
      "g=0x1f h=\"x y\" q=\"say \\\"hi\\\" \\\\ \\n \\u0001\" - f.cc:1",
      "20261121 08:15:02.123456Z     7 INFO  real message=fake log.level=x log=y "
      "process.thread.id.x=1 fields.x=2 - f.cc:1",
      "20261121 08:15:02.123456Z     7 WARN  caf\xc3\xa9 \xf0\x9f\x98\x80 no fields - f.cc:1",
      "20261121 08:15:02.123456Z     7 ERROR  user=only - f.cc:1",
      "20261121 08:15:02.123456Z     7 FATAL no trailer",
  };
  for (const std::string& text : texts) {
    LogRecord parsed;
    ASSERT_TRUE(detail::parseLine(text, utc, &parsed)) << text;
    std::string storage;
    LogRecord record;
    ASSERT_EQ(detail::readJsonLine(toJson(text), &storage, &record), detail::JsonLineKind::kParts)
        << toJson(text);
    EXPECT_EQ(record.time, parsed.time);
    EXPECT_EQ(record.level, parsed.level);
    EXPECT_EQ(record.tid, parsed.tid);
    EXPECT_EQ(record.function, parsed.function);
    EXPECT_EQ(record.file, parsed.file);
    EXPECT_EQ(record.line, parsed.line);
    // One view: the message ends in its fields.
    ASSERT_EQ(record.message.data() + record.message.size(),
              record.fields.data() + record.fields.size());
    EXPECT_EQ(record.message, parsed.message) << text;
    std::string again;
    detail::appendEncoded(detail::encoderFor(LineFormat::kJson), record, &again);
    EXPECT_EQ(again, toJson(text));
  }
}

TEST(JsonLines, AWrappedLineReadsBackAsItsText) {
  std::string storage;
  LogRecord parts;
  EXPECT_EQ(detail::readJsonLine(toJson("Dropped log messages \"x\"\n"), &storage, &parts),
            detail::JsonLineKind::kMessage);
  EXPECT_EQ(parts.message, "Dropped log messages \"x\"");
}

TEST(JsonLines, JsonMuonDoesNotWriteIsNotReadAsALine) {
  const std::string good =
      "{\"@timestamp\":\"2026-11-21T08:15:02.123456Z\",\"log.level\":\"INFO\","
      "\"process.thread.id\":4321,\"message\":\"m\"}";
  std::string storage;
  LogRecord parts;
  ASSERT_EQ(detail::readJsonLine(good, &storage, &parts), detail::JsonLineKind::kParts);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::string others[] = {
      "", "{", "{}", "[1]", "not json", "{\"message\":1}", "{\"message\":\"m\"} x",
      "{\"message\":\"m\",\"message\":\"n\"}",
      replaced("\"m\"", "null"),
      replaced("\"m\"}", "\"m\",\"k\":{}}"),
      replaced("\"m\"}", "\"m\",\"k\":[1]}"),
      replaced("\"m\"}", "\"m\",\"bad key\":1}"),
      replaced("\"m\"}", "\"m\",\"k\":01}"),
      replaced("\"m\"}", "\"m\",\"log.origin.file.name\":\"f.cc\"}"),  // no line
      replaced("\"INFO\"", "\"NOTICE\""),
      replaced("4321", "\"4321\""),
      replaced("4321", "-1"),
      replaced("T08", " 08"),
      replaced(".123456Z", ".123Z"),
      replaced("\"m\"", "\"a\\qb\""),
      replaced("\"m\"", "\"tab\tin\""),
      replaced(",\"log.level\":\"INFO\"", ""),
  };
  for (const std::string& line : others) {
    EXPECT_EQ(detail::readJsonLine(line, &storage, &parts), detail::JsonLineKind::kOther) << line;
  }
}

// ---- statements through the files ----------------------------------------

Timestamp fixedClock() { return Timestamp(1795248902123456); }

// The values of the bad-input list: each must come back exactly (invalid
// UTF-8 as U+FFFD), and every line must parse.
std::vector<std::string> badValues() {
  return {"plain", "", "two words", "say \"hi\"", "back\\slash", "a=b", std::string("nul\0in", 6),
          "\x01\x1b[31m\r\n\t\x7f", "12", "true", "caf\xc3\xa9", "\xff\xfe", std::string(100000, 'm')};
}

void logStatements() {
  LOG_INFO << "login" << kv("user", "alice") << kv("ms", 12) << kv("ok", false)
           << kv("ratio", 0.25) << kv("nan", std::nan("")) << kv("inf", -HUGE_VAL);
  for (const std::string& v : badValues()) LOG_INFO << "bad" << kv("v", v) << kv("n", 1);
  LOG_WARN << "names" << kv("a b", 1) << kv("", 2) << kv("x=\"\n", 3) << kv("message", "m");
  // Text that looks like fields is text: only kv operands are fields.
  LOG_INFO << "forged user=mallory ms=1 message=x";
  LOG_INFO << "mid" << kv("k", 1) << " tail" << kv("last", 2);
  LogContext ctx{{"request_id", "r-1"}};
  LOG_ERROR << "in context" << kv("user", "bob");
  // Issue #40: messages of 5,000 bytes or more, cut, their fields and
  // context kept: by the statement (a record that outgrows its buffer), by
  // the backend or the statement (1,250 control bytes, 5,000 once escaped;
  // too many operands for a crash-safe recorded line), by the backend or a
  // recovery (960 control bytes, 3,840 once escaped).
  LOG_INFO << std::string(5000, 'x') << kv("user", "alice") << kv("ms", 12);
  LOG_INFO << std::string(1250, '\x01') << kv("user", "alice") << kv("ms", 12);
  LOG_INFO << std::string(960, '\x01') << kv("user", "alice") << kv("ms", 12);
}
// The lines logStatements() cuts: the three above and the 100,000-byte field.
constexpr uint64_t kCutLines = 4;

// Checks the JSON lines logStatements() made.
void checkJson(const std::vector<std::string>& lines) {
  std::vector<json> objects;
  for (const std::string& line : lines) {
    json j;
    ASSERT_NO_THROW(j = json::parse(line)) << line.substr(0, 200);
    if (j.contains("log.level")) objects.push_back(j);
  }
  const size_t bad = badValues().size();
  ASSERT_EQ(objects.size(), bad + 8);
  const json& first = objects[0];
  EXPECT_EQ(first.at("message"), "login");
  EXPECT_EQ(first.at("user"), "alice");
  EXPECT_EQ(first.at("ms"), 12);
  EXPECT_EQ(first.at("ok"), false);
  EXPECT_EQ(first.at("ratio"), 0.25);
  EXPECT_EQ(first.at("nan"), "nan");
  EXPECT_EQ(first.at("inf"), "-inf");
  EXPECT_EQ(first.at("@timestamp"), "2026-11-21T08:15:02.123456Z");
  EXPECT_EQ(first.at("log.origin.file.name"), "JsonLines_test.cc");
  EXPECT_TRUE(first.at("log.origin.file.line").is_number_integer());
  for (size_t i = 0; i < bad; ++i) {
    const json& j = objects[1 + i];
    const std::string v = badValues()[i];
    EXPECT_EQ(j.at("message"), "bad");
    if (v.size() > 10000) {  // cut with the line (and n with it), still a string of it
      const std::string got = j.at("v");
      EXPECT_GT(got.size(), 3000u);
      EXPECT_EQ(got, std::string(got.size(), 'm'));
    } else if (v == "\xff\xfe") {
      EXPECT_EQ(j.at("v"), "\xef\xbf\xbd\xef\xbf\xbd");
      EXPECT_EQ(j.at("n"), 1);
    } else {
      EXPECT_EQ(j.at("v"), v) << i;
      EXPECT_EQ(j.at("n"), 1);
    }
  }
  const json& names = objects[1 + bad];
  EXPECT_EQ(names.at("a_b"), 1);
  EXPECT_EQ(names.at("_"), 2);
  EXPECT_EQ(names.at("x___"), 3);
  EXPECT_EQ(names.at("fields.message"), "m");
  EXPECT_EQ(names.at("message"), "names");
  const json& forged = objects[2 + bad];
  EXPECT_EQ(forged.at("message"), "forged user=mallory ms=1 message=x");
  EXPECT_FALSE(forged.contains("user"));
  EXPECT_FALSE(forged.contains("fields.message"));
  EXPECT_EQ(forged.size(), 6u) << forged.dump();
  // A field followed by more text stays in the message; the last is a field.
  const json& mid = objects[3 + bad];
  EXPECT_EQ(mid.at("message"), "mid k=1 tail");
  EXPECT_FALSE(mid.contains("k"));
  EXPECT_EQ(mid.at("last"), 2);
  const json& ctx = objects[4 + bad];
  EXPECT_EQ(ctx.at("user"), "bob");
  EXPECT_EQ(ctx.at("request_id"), "r-1");
  EXPECT_EQ(ctx.at("log.level"), "ERROR");
  EXPECT_FALSE(ctx.contains("log.truncated"));
  for (size_t i = 5 + bad; i < 8 + bad; ++i) {
    const json& cut = objects[i];
    EXPECT_EQ(cut.at("user"), "alice") << i;
    EXPECT_EQ(cut.at("ms"), 12) << i;
    EXPECT_EQ(cut.at("request_id"), "r-1") << i;
    EXPECT_EQ(cut.at("log.truncated"), true) << i;
    const std::string message = cut.at("message");
    EXPECT_GT(message.size(), LogStream::kMessageEnd - 64) << i;
    EXPECT_EQ(message.substr(message.size() - 4), i == 5 + bad ? "xxxx" : "\\x01") << i;
  }
  // The 100,000-byte field, cut and marked.
  EXPECT_EQ(objects[bad].at("log.truncated"), true);
}

// logStatements() through a JSON SyncLogging writing into `dir`: the
// lines the statements format themselves, the other paths' reference.
void logThroughJsonSyncLogging(const TempDir& dir) {
  SyncLogging::Options options;
  options.files.format = LineFormat::kJson;
  SyncLogging log(dir.file("s"), 1 << 30, options);
  auto attached = Logger::attach(log);
  logStatements();
}

class JsonFiles : public ::testing::Test {
 protected:
  void SetUp() override { Logger::setClock(&fixedClock); }
  void TearDown() override { Logger::setClock(nullptr); }
};

TEST_F(JsonFiles, SyncLoggingWritesJsonLines) {
  TempDir dir;
  const uint64_t cutBefore = Logger::linesTruncated();
  logThroughJsonSyncLogging(dir);
  checkJson(logLinesIn(dir));
  EXPECT_EQ(Logger::linesTruncated(), cutBefore + kCutLines);
}

TEST_F(JsonFiles, AsyncLoggingsBackendWritesTheSameJson) {
  TempDir syncDir;
  TempDir asyncDir;
  logThroughJsonSyncLogging(syncDir);
  const uint64_t cutBefore = Logger::linesTruncated();
  {
    AsyncLogging::Options options;
    options.files.format = LineFormat::kJson;
    AsyncLogging log(asyncDir.file("a"), 1 << 30, options);
    auto attached = Logger::attach(log);
    log.start();
    logStatements();
    log.stop();
  }
  checkJson(logLinesIn(asyncDir));
  EXPECT_EQ(logLinesIn(asyncDir), logLinesIn(syncDir));
  EXPECT_EQ(Logger::linesTruncated(), cutBefore + kCutLines);
}

TEST_F(JsonFiles, ACrashSafeRecoveryWritesTheJsonTheBackendWould) {
  TempDir dir;
  TempDir reference;
  logThroughJsonSyncLogging(reference);
  AsyncLogging::Options options;
  options.crashSafe = true;
  options.files.format = LineFormat::kJson;
  const std::string base = dir.file("cs");
  // A child logs into its spool (no backend started: the lines wait there as
  // recorded lines) and dies without writing them.
  const pid_t pid = ::fork();
  if (pid == 0) {
    AsyncLogging log(base, 1 << 30, options);
    if (!log.stats().crashSafe) ::_exit(3);
    auto attached = Logger::attach(log);
    logStatements();
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // The recovery formats and counts the one cut line the child recorded
  // (960 control bytes); the child's statements cut and counted the others.
  const uint64_t cutBefore = Logger::linesTruncated();
  { AsyncLogging recovering(base, 1 << 30, options); }
  EXPECT_EQ(Logger::linesTruncated(), cutBefore + 1);
  std::vector<std::string> recovered;
  for (const std::string& line : logLinesIn(dir)) {
    if (line.find("\"log.level\"") != std::string::npos) recovered.push_back(line);
  }
  checkJson(recovered);
  // The same bytes but for the thread id (the child's).
  auto withoutTid = [](std::vector<std::string> lines) {
    for (std::string& l : lines) {
      const size_t at = l.find("\"process.thread.id\":");
      if (at != std::string::npos) l.erase(at, l.find(',', at) - at);
    }
    return lines;
  };
  EXPECT_EQ(withoutTid(recovered), withoutTid(logLinesIn(reference)));
}

TEST(JsonLines, AFileReadsNoFieldsOutOfATextLine) {
  // A text line appended to a JSON file directly says nothing of fields:
  // its message is kept whole. A JSON object is kept as it is.
  TempDir dir;
  {
    LogFile::Options options;
    options.format = LineFormat::kJson;
    LogFile file(dir.file("f"), 1 << 30, false, 3, 1024, options);
    const std::string text = "20261121 08:15:02.123456Z  4321 INFO  x user=bob - f.cc:1\n";
    file.append(text.data(), text.size());
    const std::string object = "{\"message\":\"as is\"}\n";
    file.append(object.data(), object.size());
  }
  const std::vector<std::string> lines = logLinesIn(dir);
  ASSERT_EQ(lines.size(), 2u);
  const json j = json::parse(lines[0]);
  EXPECT_EQ(j.at("message"), "x user=bob");
  EXPECT_FALSE(j.contains("user"));
  EXPECT_EQ(lines[1], "{\"message\":\"as is\"}");
}

// AsyncLogging's backend writes its buffers and queues as they are
// (LogFile::appendEncoded): a text line handed to a JSON AsyncLogging is
// encoded when it comes, whichever way it goes (the buffers, a thread's
// queue, the spool).
TEST(JsonLines, AsyncLoggingEncodesATextLineHandedToIt) {
  for (const bool crashSafe : {false, true}) {
    SCOPED_TRACE(crashSafe ? "crash-safe" : "plain");
    TempDir dir;
    {
      AsyncLogging::Options options;
      options.files.format = LineFormat::kJson;
      options.crashSafe = crashSafe;
      AsyncLogging log(dir.file("f"), 1 << 30, options);
      log.start();
      const std::string text = "20261121 08:15:02.123456Z  4321 WARN  disk full - df.cc:42\n";
      log.append(text.data(), text.size());  // no queue yet: the buffers
      log.flush();  // written before the queue's lines, which may pass it
      {
        auto attached = Logger::attach(log);
        LOG_INFO << "queued";  // this thread's queue, where one is made
        log.append("a foreign line\n", 15);
      }
      const std::string object = "{\"message\":\"as is\"}\n";
      log.append(object.data(), object.size());
      log.stop();
    }
    const std::vector<std::string> lines = logLinesIn(dir);
    ASSERT_EQ(lines.size(), 4u);
    const json first = json::parse(lines[0]);
    EXPECT_EQ(first.at("message"), "disk full");
    EXPECT_EQ(first.at("log.level"), "WARN");
    EXPECT_EQ(first.at("process.thread.id"), 4321);
    EXPECT_EQ(json::parse(lines[1]).at("message"), "queued");
    EXPECT_EQ(json::parse(lines[2]).at("message"), "a foreign line");
    EXPECT_EQ(lines[3], "{\"message\":\"as is\"}");
  }
}

TEST(JsonLinesStdout, StdoutSinkWritesJsonLines) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(fds[1], STDOUT_FILENO);
  {
    StdoutSink console(LineFormat::kJson);
    auto attached = Logger::attach(console);
    LOG_INFO << "to stdout" << kv("k", "v w");
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(fds[1]);
  char buf[4096];
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  ASSERT_GT(n, 0);
  const std::string out(buf, static_cast<size_t>(n));
  ASSERT_EQ(out.back(), '\n');
  const json j = json::parse(out);
  EXPECT_EQ(j.at("message"), "to stdout");
  EXPECT_EQ(j.at("k"), "v w");
}

}  // namespace
}  // namespace muon
