// Logfmt lines (LineFormat::kLogfmt, LineFormat.h): the encoder's bytes,
// and the lines every path writes (a statement, AsyncLogging's backend, a
// crash-safe recovery, StdoutSink, a text line given to a file, logbench,
// muon-logcat --logfmt), each read back by a logfmt parser of the test's own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "LogfmtParser.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/LogFile.h"
#include "muon/base/Logging.h"
#include "muon/base/LogRecord.h"
#include "muon/base/StdoutSink.h"
#include "muon/base/SyncLogging.h"
#include "muon/base/TimeZone.h"
#ifdef MUON_LOGCAT_PATH
#include "muon/base/filestages/ZstdStage.h"
#endif

namespace muon {
namespace {

using test::Pairs;
using test::parseLogfmt;
using test::logLinesIn;
using test::readLines;
using test::TempDir;

// The pairs as a map; the test fails on a key seen twice.
std::map<std::string, std::string> keysOf(const std::string& line) {
  Pairs pairs;
  EXPECT_TRUE(parseLogfmt(line, &pairs)) << line.substr(0, 300);
  std::map<std::string, std::string> keys;
  for (auto& p : pairs) EXPECT_TRUE(keys.emplace(p.first, p.second).second) << p.first << " in " << line;
  return keys;
}

// ---- the encoder ------------------------------------------------------------------

std::string toLogfmt(const std::string& line) {
  std::string out;
  detail::appendTextLine(detail::encoderFor(LineFormat::kLogfmt), line, TimeZone(),
                         detail::FieldsInText::kRead, &out);
  return out;
}

TEST(LogfmtLines, ALineBecomesTimeLevelThreadMsgFileLineAndItsFields) {
  EXPECT_EQ(toLogfmt("20261121 08:15:02.123456Z  4321 INFO  login user=alice ms=12 - auth.cc:42\n"),
            "time=2026-11-21T08:15:02.123456Z level=INFO thread=4321 msg=login file=auth.cc "
            "line=42 user=alice ms=12\n");
  EXPECT_EQ(toLogfmt("20261121 08:15:02.000001Z     7 DEBUG fn two words q=\"x y\" - f.cc:1\n"),
            "time=2026-11-21T08:15:02.000001Z level=DEBUG thread=7 func=fn msg=\"two words\" "
            "file=f.cc line=1 q=\"x y\"\n");
}

TEST(LogfmtLines, AFieldNamedLikeAKeyIsKeptUnderAPrefix) {
  std::string line = toLogfmt(
      "20261121 08:15:02.123456Z     7 INFO  m level=x msg=y time=1 thread=2 file=f line=3 "
      "func=g other=z - f.cc:1");
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  const auto keys = keysOf(line);
  EXPECT_EQ(keys.at("level"), "INFO");
  EXPECT_EQ(keys.at("msg"), "m");
  EXPECT_EQ(keys.at("fields.level"), "x");
  EXPECT_EQ(keys.at("fields.msg"), "y");
  EXPECT_EQ(keys.at("fields.time"), "1");
  EXPECT_EQ(keys.at("fields.thread"), "2");
  EXPECT_EQ(keys.at("fields.file"), "f");
  EXPECT_EQ(keys.at("fields.line"), "3");
  EXPECT_EQ(keys.at("fields.func"), "g");
  EXPECT_EQ(keys.at("other"), "z");
}

TEST(LogfmtLines, AMessageThatNeedsQuotesGetsThem) {
  for (const std::string& message :
       {std::string("say \"hi\""), std::string("a=b"), std::string("12"), std::string("true"),
        std::string("back\\slash"), std::string("tab\there")}) {
    LogRecord record;
    record.time = Timestamp(1795248902123456);
    record.message = message;
    std::string line;
    detail::appendEncoded(detail::encoderFor(LineFormat::kLogfmt), record, &line);
    ASSERT_EQ(line.back(), '\n');
    line.pop_back();
    EXPECT_EQ(keysOf(line).at("msg"), message) << line;
  }
}

TEST(LogfmtLines, ALineNotInMuonsLayoutIsKeptWholeAsTheMessage) {
  EXPECT_EQ(toLogfmt("Dropped 3 log messages\n"), "msg=\"Dropped 3 log messages\"\n");
  EXPECT_EQ(toLogfmt("time=2026-11-21T08:15:02.123456Z level=INFO msg=x\n"),
            "time=2026-11-21T08:15:02.123456Z level=INFO msg=x\n");
}

TEST(LogfmtLines, AJsonLineIsReadBackIntoItsParts) {
  std::string json;
  detail::appendJsonLine("20261121 08:15:02.123456Z  4321 INFO  login user=alice ms=12 - auth.cc:42",
                         TimeZone(), detail::FieldsInText::kRead, &json);
  EXPECT_EQ(toLogfmt(json), toLogfmt("20261121 08:15:02.123456Z  4321 INFO  login user=alice ms=12 - auth.cc:42"));
}

// ---- statements through the files ----------------------------------------------

Timestamp fixedClock() { return Timestamp(1795248902123456); }

std::vector<std::string> badValues() {
  return {"plain", "", "two words", "say \"hi\"", "back\\slash", "a=b", std::string("nul\0in", 6),
          "\x01\x1b[31m\r\n\t\x7f", "12", "true", "caf\xc3\xa9", std::string(100000, 'm')};
}

void logStatements() {
  LOG_INFO << "login" << kv("user", "alice") << kv("ms", 12) << kv("ok", false)
           << kv("ratio", 0.25) << kv("nan", std::nan(""));
  for (const std::string& v : badValues()) LOG_INFO << "bad" << kv("v", v) << kv("n", 1);
  LOG_WARN << "names" << kv("a b", 1) << kv("level", "x") << kv("msg", "m");
  LOG_INFO << "forged user=mallory ms=1";
  LOG_INFO << "mid" << kv("k", 1) << " tail" << kv("last", 2);
  LogContext ctx{{"request_id", "r-1"}};
  LOG_ERROR << "in context" << kv("user", "bob");
  LOG_INFO << std::string(5000, 'x') << kv("user", "alice");
}

// Checks the logfmt lines logStatements() made.
void checkLogfmt(const std::vector<std::string>& lines) {
  std::vector<std::map<std::string, std::string>> parsed;
  for (const std::string& line : lines) {
    auto keys = keysOf(line);
    if (keys.count("level") != 0) parsed.push_back(std::move(keys));
  }
  const size_t bad = badValues().size();
  ASSERT_EQ(parsed.size(), bad + 6);
  const auto& first = parsed[0];
  EXPECT_EQ(first.at("time"), "2026-11-21T08:15:02.123456Z");
  EXPECT_EQ(first.at("level"), "INFO");
  EXPECT_EQ(first.at("msg"), "login");
  EXPECT_EQ(first.at("file"), "LogfmtLines_test.cc");
  EXPECT_NE(first.at("line"), "0");
  EXPECT_NE(first.at("thread"), "");
  EXPECT_EQ(first.at("user"), "alice");
  EXPECT_EQ(first.at("ms"), "12");
  EXPECT_EQ(first.at("ok"), "false");
  EXPECT_EQ(first.at("ratio"), "0.25");
  EXPECT_EQ(first.at("nan"), "nan");
  for (size_t i = 0; i < bad; ++i) {
    const auto& keys = parsed[1 + i];
    const std::string v = badValues()[i];
    EXPECT_EQ(keys.at("msg"), "bad");
    if (v.size() > 10000) {  // cut with the line, and marked
      EXPECT_GT(keys.at("v").size(), 3000u);
      EXPECT_EQ(keys.at("log.truncated"), "true");
    } else {
      EXPECT_EQ(keys.at("v"), v) << i;
      EXPECT_EQ(keys.at("n"), "1");
    }
  }
  const auto& names = parsed[1 + bad];
  EXPECT_EQ(names.at("a_b"), "1");
  EXPECT_EQ(names.at("fields.level"), "x");
  EXPECT_EQ(names.at("fields.msg"), "m");
  EXPECT_EQ(names.at("level"), "WARN");
  const auto& forged = parsed[2 + bad];
  EXPECT_EQ(forged.at("msg"), "forged user=mallory ms=1");
  EXPECT_EQ(forged.count("user"), 0u);
  const auto& mid = parsed[3 + bad];
  EXPECT_EQ(mid.at("msg"), "mid k=1 tail");
  EXPECT_EQ(mid.at("last"), "2");
  const auto& ctx = parsed[4 + bad];
  EXPECT_EQ(ctx.at("user"), "bob");
  EXPECT_EQ(ctx.at("request_id"), "r-1");
  const auto& cut = parsed[5 + bad];
  EXPECT_EQ(cut.at("user"), "alice");
  EXPECT_EQ(cut.at("log.truncated"), "true");
  EXPECT_GT(cut.at("msg").size(), LogStream::kMessageEnd - 64);
}

void logThroughLogfmtSyncLogging(const TempDir& dir) {
  SyncLogging::Options options;
  options.files.format = LineFormat::kLogfmt;
  SyncLogging log(dir.file("s"), 1 << 30, options);
  auto attached = Logger::attach(log);
  logStatements();
}

class LogfmtFiles : public ::testing::Test {
 protected:
  void SetUp() override { Logger::setClock(&fixedClock); }
  void TearDown() override { Logger::setClock(nullptr); }
};

TEST_F(LogfmtFiles, SyncLoggingWritesLogfmtLines) {
  TempDir dir;
  logThroughLogfmtSyncLogging(dir);
  checkLogfmt(logLinesIn(dir));
}

TEST_F(LogfmtFiles, AsyncLoggingsBackendWritesTheSameLines) {
  TempDir syncDir;
  TempDir asyncDir;
  logThroughLogfmtSyncLogging(syncDir);
  {
    AsyncLogging::Options options;
    options.files.format = LineFormat::kLogfmt;
    AsyncLogging log(asyncDir.file("a"), 1 << 30, options);
    auto attached = Logger::attach(log);
    log.start();
    logStatements();
    log.stop();
  }
  checkLogfmt(logLinesIn(asyncDir));
  EXPECT_EQ(logLinesIn(asyncDir), logLinesIn(syncDir));
}

// A child logs into a crash-safe logfmt AsyncLogging's spool in `base` (no
// backend started: the lines wait there as recorded lines) and dies
// without writing them.
void dieWithLinesInTheSpool(const std::string& base) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    AsyncLogging::Options options;
    options.crashSafe = true;
    options.files.format = LineFormat::kLogfmt;
    AsyncLogging log(base, 1 << 30, options);
    if (!log.stats().crashSafe) ::_exit(3);
    auto attached = Logger::attach(log);
    logStatements();
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// The recovered lines of `dir`, and the check that they are the reference's
// bytes but for the thread id (the child's).
void checkRecovered(const TempDir& dir, const TempDir& reference) {
  std::vector<std::string> recovered;
  for (const std::string& line : logLinesIn(dir)) {
    if (line.compare(0, 5, "time=") == 0) recovered.push_back(line);
  }
  checkLogfmt(recovered);
  auto withoutThread = [](std::vector<std::string> lines) {
    for (std::string& l : lines) {
      const size_t at = l.find(" thread=");
      if (at != std::string::npos) l.erase(at, l.find(' ', at + 1) - at);
    }
    return lines;
  };
  EXPECT_EQ(withoutThread(recovered), withoutThread(logLinesIn(reference)));
}

TEST_F(LogfmtFiles, ACrashSafeRecoveryWritesTheLinesTheBackendWould) {
  TempDir dir;
  TempDir reference;
  logThroughLogfmtSyncLogging(reference);
  const std::string base = dir.file("cs");
  dieWithLinesInTheSpool(base);
  {
    AsyncLogging::Options options;
    options.crashSafe = true;
    options.files.format = LineFormat::kLogfmt;
    AsyncLogging recovering(base, 1 << 30, options);
  }
  checkRecovered(dir, reference);
}

#ifdef MUON_RECOVER_PATH
TEST_F(LogfmtFiles, MuonRecoverLogfmtWritesTheSameLines) {
  TempDir dir;
  TempDir reference;
  logThroughLogfmtSyncLogging(reference);
  dieWithLinesInTheSpool(dir.file("cs"));
  const std::string command = std::string(MUON_RECOVER_PATH) + " --logfmt '" + dir.path() + "' >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  checkRecovered(dir, reference);
}
#endif

TEST(LogfmtLines, AFileReadsNoFieldsOutOfATextLine) {
  TempDir dir;
  {
    LogFile::Options options;
    options.format = LineFormat::kLogfmt;
    LogFile file(dir.file("f"), 1 << 30, false, 3, 1024, options);
    const std::string text = "20261121 08:15:02.123456Z  4321 INFO  x user=bob - f.cc:1\n";
    file.append(text.data(), text.size());
  }
  const std::vector<std::string> lines = logLinesIn(dir);
  ASSERT_EQ(lines.size(), 1u);
  const auto keys = keysOf(lines[0]);
  EXPECT_EQ(keys.at("msg"), "x user=bob");
  EXPECT_EQ(keys.count("user"), 0u);
}

TEST(LogfmtLinesStdout, StdoutSinkWritesLogfmtLines) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int saved = ::dup(STDOUT_FILENO);
  ::fflush(stdout);
  ::dup2(fds[1], STDOUT_FILENO);
  {
    StdoutSink console(LineFormat::kLogfmt);
    auto attached = Logger::attach(console);
    LOG_INFO << "to stdout" << kv("user", "alice");
  }
  ::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(fds[1]);
  std::string got;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  ASSERT_FALSE(got.empty());
  ASSERT_EQ(got.back(), '\n');
  got.pop_back();
  const auto keys = keysOf(got);
  EXPECT_EQ(keys.at("msg"), "to stdout");
  EXPECT_EQ(keys.at("user"), "alice");
  EXPECT_EQ(keys.at("level"), "INFO");
}

std::string run(const std::string& command, int* status) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = ::pclose(p);
  return out;
}

#ifdef MUON_LOGBENCH_PATH
// The check as a user runs it: logbench's logfmt files, every line
// with the line's keys and the three fields.
TEST(LogfmtLines, LogbenchWritesLinesThatEachParse) {
  TempDir dir;
  int status = -1;
  const std::string out =
      run(std::string(MUON_LOGBENCH_PATH) + " --logger muon --format logfmt --fields 3 --messages 2000 --keep --dir '" +
              dir.path() + "' 2>&1",
          &status);
  ASSERT_EQ(status, 0) << out;
  size_t count = 0;
  for (const std::string& run : dir.files()) {  // the run's own subdirectory
    for (const std::string& f : TempDir::filesIn(run)) {
      if (f.find(".log") != std::string::npos) {
        for (const std::string& line : readLines(f)) {
          const auto keys = keysOf(line);
          for (const char* key :
               {"time", "level", "thread", "msg", "file", "line", "user", "count", "ratio"}) {
            EXPECT_EQ(keys.count(key), 1u) << key << " in " << line;
          }
          ++count;
        }
      }
      ::unlink(f.c_str());
    }
    ::rmdir(run.c_str());
  }
  EXPECT_EQ(count, 2000u) << out;
}
#endif

#ifdef MUON_LOGCAT_PATH
TEST(LogfmtLines, LogcatPrintsAZstdFilesLinesAsALogfmtFileHoldsThem) {
  TempDir dir;
  Logger::setClock(&fixedClock);
  {
    SyncLogging::Options textOptions;
    textOptions.files.stages.push_back(std::make_shared<ZstdStage>());
    SyncLogging text(dir.file("text"), 1 << 30, textOptions);
    SyncLogging::Options logfmtOptions;
    logfmtOptions.files.format = LineFormat::kLogfmt;
    SyncLogging logfmt(dir.file("logfmt"), 1 << 30, logfmtOptions);
    auto toText = Logger::addSink(text);
    auto toLogfmt = Logger::addSink(logfmt);
    LOG_INFO << "login" << kv("user", "alice") << kv("ms", 12) << kv("note", "two \"words\"\n");
    LOG_WARN << "disk" << kv("free", 0.5) << kv("msg", "m");
    LOG_INFO << "no fields at all";
  }
  Logger::setClock(nullptr);
  std::string textFile;
  std::string logfmtFile;
  for (const std::string& f : dir.files()) {
    if (f.find("/text.") != std::string::npos) textFile = f;
    if (f.find("/logfmt.") != std::string::npos) logfmtFile = f;
  }
  ASSERT_FALSE(textFile.empty());
  ASSERT_FALSE(logfmtFile.empty());
  int status = -1;
  const std::string printed = run(std::string(MUON_LOGCAT_PATH) + " --logfmt '" + textFile + "'", &status);
  EXPECT_EQ(status, 0);
  std::string expected;
  for (const std::string& l : readLines(logfmtFile)) expected += l + "\n";
  EXPECT_EQ(printed, expected);
  EXPECT_NE(printed.find(" fields.msg=m"), std::string::npos) << printed;
  EXPECT_EQ(run(std::string(MUON_LOGCAT_PATH) + " --json --logfmt '" + textFile + "' 2>&1", &status)
                .find("exclude each other") != std::string::npos,
            true);
  EXPECT_EQ(WEXITSTATUS(status), 2);
}
#endif

}  // namespace
}  // namespace muon
