#include "muon/base/Logging.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ChildProcess.h"
#include "LineCapture.h"
#include "PosixRegex.h"
#include "StderrLog.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/TimeZone.h"

// The macros must not provoke a dangling-else warning in an unbraced if:
// users build with -Wall too. Turned into an error so a regression fails the build.
#pragma GCC diagnostic error "-Wdangling-else"
#pragma GCC diagnostic error "-Wparentheses"


// Counts the program's snprintf calls (this definition takes precedence over
// the C library's), to show that a log line needs none once its thread id
// and second are cached.
namespace {
std::atomic<int> g_snprintfCalls{0};
}  // namespace

extern "C" int snprintf(char* __restrict buf, size_t size, const char* __restrict format, ...)
    __THROWNL {
  g_snprintfCalls.fetch_add(1, std::memory_order_relaxed);
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, size, format, args);
  va_end(args);
  return n;
}

namespace muon {
namespace {

// ---- compile-time basename -------------------------------------------------

static_assert(detail::basenameOffset("a/b/c.cc") == 4, "");
static_assert(detail::basenameOffset("c.cc") == 0, "");
static_assert(detail::basenameOffset("/abs/dir/x.h") == 9, "");
static_assert(detail::basenameOffset("dir/") == 4, "");

constexpr bool equals(const char* a, size_t n, const char* b) {
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i] || b[i] == '\0') return false;
  }
  return b[n] == '\0';
}

// The trailer " - basename:line\n" is a constant expression: the basename is
// cut from the (absolute, under CMake) path and the line number written by
// the compiler, not at each log statement.
constexpr detail::SourceLocation kHere = detail::makeSourceLocation(__FILE__, 1234);
static_assert(equals(kHere.trailer, kHere.length, " - Logging_test.cc:1234\n"),
              "the trailer must be computed at compile time");
constexpr detail::SourceLocation kLineZero = detail::makeSourceLocation("/x/y.cc", 0);
static_assert(equals(kLineZero.trailer, kLineZero.length, " - y.cc:0\n"), "");

// ---- capture -----------------------------------------------------------------

// Logger's output and flush functions (setOutput, setFlush: what these tests
// test) keep every line and count flushes in g_capture.
muon::test::LineCapture g_capture;
std::atomic<int64_t> g_nowUs{0};

void captureOutput(const char* msg, size_t len) { g_capture.append(msg, len); }
void countFlush() { g_capture.flush(); }

Timestamp fixedClock() { return Timestamp(g_nowUs.load()); }

std::vector<std::string> lines() { return g_capture.lines(); }
std::string lastLine() { return g_capture.last(); }
size_t lineCount() { return g_capture.size(); }
int flushCount() { return g_capture.flushes(); }

int gettid() { return static_cast<int>(::syscall(SYS_gettid)); }

std::string tidField(int tid) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%5d ", tid);
  return buf;
}

std::string trailer(int line) { return " - Logging_test.cc:" + std::to_string(line) + "\n"; }

int g_sideEffects = 0;
int sideEffect() {
  ++g_sideEffects;
  return 7;
}

// Every test starts from the defaults, with lines captured and the clock
// fixed, and puts every global back however it ends.
class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    savedLevel_ = Logger::logLevel();
    g_capture.clear();
    g_sideEffects = 0;
    g_nowUs = 1795248902123456;  // 2026-11-21 08:15:02.123456 UTC
    Logger::setLogLevel(Logger::INFO);
    Logger::setOutput(&captureOutput);
    Logger::setFlush(&countFlush);
    Logger::setClock(&fixedClock);
    Logger::setTimeZone(TimeZone());
  }

  void TearDown() override {
    Logger::setLogLevel(savedLevel_);
    Logger::setFlushLevel(Logger::FATAL);
    Logger::setOutput(nullptr);
    Logger::setFlush(nullptr);
    Logger::setClock(nullptr);
    Logger::setTimeZone(TimeZone());
  }

  static std::string logAt(int64_t us) {
    g_nowUs = us;
    LOG_INFO << "x";
    return lastLine();
  }

  // The date-time part of a line: through the microseconds and the 'Z', if any.
  static std::string dateTimeAt(int64_t us) {
    std::string line = logAt(us);
    return line.substr(0, line[24] == 'Z' ? 25 : 24);
  }

 private:
  Logger::LogLevel savedLevel_ = Logger::INFO;
};

// ---- the line format ---------------------------------------------------------

// A log line taken apart. parseLine() checks the shape of every field, as a
// log-reading tool would, independently of the expected values.
struct ParsedLine {
  std::string dateTime;  // "20261121 08:15:02.123456", without the 'Z'
  bool utc = false;
  int tid = 0;
  std::string level;  // padded to 6
  std::string message;
  std::string file;
  int line = 0;
};

bool digitsAt(const std::string& s, size_t pos, size_t n) {
  if (pos + n > s.size()) return false;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

bool parseLine(const std::string& l, ParsedLine* out) {
  // "YYYYmmdd HH:MM:SS.uuuuuu", then 'Z' in UTC only, then one space.
  if (!digitsAt(l, 0, 8) || l[8] != ' ' || !digitsAt(l, 9, 2) || l[11] != ':' ||
      !digitsAt(l, 12, 2) || l[14] != ':' || !digitsAt(l, 15, 2) || l[17] != '.' ||
      !digitsAt(l, 18, 6))
    return false;
  out->dateTime = l.substr(0, 24);
  size_t p = 24;
  out->utc = p < l.size() && l[p] == 'Z';
  if (out->utc) ++p;
  if (p >= l.size() || l[p] != ' ') return false;
  ++p;
  // "%5d ": right-aligned in 5 columns, wider only for a longer number.
  const size_t tidStart = p;
  while (p < l.size() && l[p] == ' ') ++p;
  const size_t digitsStart = p;
  while (p < l.size() && std::isdigit(static_cast<unsigned char>(l[p]))) ++p;
  const size_t digits = p - digitsStart;
  if (digits == 0 || p - tidStart != std::max<size_t>(5, digits) || p >= l.size() || l[p] != ' ')
    return false;
  out->tid = std::stoi(l.substr(digitsStart, digits));
  ++p;
  out->level = l.substr(p, 6);
  static const char* const kLevels[] = {"TRACE ", "DEBUG ", "INFO  ", "WARN  ", "ERROR ", "FATAL "};
  if (std::find(std::begin(kLevels), std::end(kLevels), out->level) == std::end(kLevels)) return false;
  p += 6;
  // " - basename:line\n", and no other newline.
  if (l.back() != '\n' || l.find('\n') != l.size() - 1) return false;
  const size_t dash = l.rfind(" - ");
  const size_t colon = l.rfind(':');
  if (dash == std::string::npos || dash < p || colon == std::string::npos || colon < dash + 4)
    return false;
  out->message = l.substr(p, dash - p);
  out->file = l.substr(dash + 3, colon - dash - 3);
  if (out->file.find_first_of("/ ") != std::string::npos) return false;
  const size_t lineDigits = l.size() - 1 - (colon + 1);
  if (lineDigits == 0 || !digitsAt(l, colon + 1, lineDigits)) return false;
  out->line = std::stoi(l.substr(colon + 1, lineDigits));
  return true;
}

// The line as a POSIX extended regular expression.
bool matchesLineRegex(const std::string& line) {
  static const muon::test::PosixRegex kLine(
      "[0-9]{8} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z? +[0-9]+ "
      "(TRACE|DEBUG|INFO |WARN |ERROR|FATAL) [^\n]* - [^/ \n]+:[0-9]+\n");
  return kLine.fullMatch(line);
}

TEST(ParseLineTest, RejectsMalformedLines) {
  ParsedLine p;
  const std::string good = "20261121 08:15:02.123456Z  4321 INFO  message - file.cc:42\n";
  EXPECT_TRUE(matchesLineRegex(good));
  EXPECT_FALSE(matchesLineRegex("20261121 08:15:02.123456Z  4321 INFO message - file.cc:42\n"));
  EXPECT_FALSE(matchesLineRegex("20261121 08:15:02.123456Z  4321 INFO  message - a/file.cc:42\n"));
  EXPECT_FALSE(matchesLineRegex("20261121 08:15:02.123456Z  4321 INFO  message - file.cc:42"));
  ASSERT_TRUE(parseLine(good, &p));
  EXPECT_EQ(p.tid, 4321);
  EXPECT_EQ(p.message, "message");
  EXPECT_TRUE(parseLine("20261121 08:15:02.123456 1234567 WARN  m - f.cc:1\n", &p));
  EXPECT_FALSE(parseLine("20261121 08:15:02.123456Z 4321 INFO  message - file.cc:42\n", &p));
  EXPECT_FALSE(parseLine("20261121 08:15:02.123456Z  4321 INFO message - file.cc:42\n", &p));
  EXPECT_FALSE(parseLine("20261121 08:15:02.12345Z  4321 INFO  message - file.cc:42\n", &p));
  EXPECT_FALSE(parseLine("20261121 08:15:02.123456Z  4321 INFO  message - a/file.cc:42\n", &p));
  EXPECT_FALSE(parseLine("20261121 08:15:02.123456Z  4321 INFO  message - file.cc:42", &p));
  EXPECT_FALSE(parseLine("20261121 08:15:02.123456Z  4321 INFO  message\n", &p));
}

TEST_F(LoggingTest, LineIsMuduosFormatByteForByte) {
  LOG_INFO << "message"; const int line = __LINE__;  // one line: __LINE__ is the log line's
  const std::string got = lastLine();
  const std::string tid = tidField(gettid());
  EXPECT_EQ(got, "20261121 08:15:02.123456Z " + tid + "INFO  message" + trailer(line));

  EXPECT_TRUE(matchesLineRegex(got)) << got;
  ParsedLine parsed;
  ASSERT_TRUE(parseLine(got, &parsed)) << got;
  EXPECT_EQ(parsed.dateTime, "20261121 08:15:02.123456");
  EXPECT_TRUE(parsed.utc);
  EXPECT_EQ(parsed.tid, gettid());
  EXPECT_EQ(parsed.level, "INFO  ");
  EXPECT_EQ(parsed.message, "message");
  EXPECT_EQ(parsed.file, "Logging_test.cc");
  EXPECT_EQ(parsed.line, line);

  // Field by field: a date-time of 24 bytes plus 'Z', a space, the tid right
  // aligned in (at least) 5 columns and a space, the level in 6, the message.
  ASSERT_GE(got.size(), 45u);
  EXPECT_EQ(got.substr(0, 8), "20261121");
  EXPECT_EQ(got[8], ' ');
  EXPECT_EQ(got.substr(9, 8), "08:15:02");
  EXPECT_EQ(got[17], '.');
  EXPECT_EQ(got.substr(18, 6), "123456");
  EXPECT_EQ(got[24], 'Z');
  EXPECT_EQ(got[25], ' ');
  EXPECT_EQ(got.substr(26, tid.size()), tid);
  EXPECT_GE(tid.size(), 6u);
  EXPECT_EQ(tid.back(), ' ');
  const size_t level = 26 + tid.size();
  EXPECT_EQ(got.substr(level, 6), "INFO  ");
  EXPECT_EQ(got.substr(level + 6, 7), "message");
  EXPECT_EQ(got.substr(level + 13), trailer(line));
  EXPECT_EQ(got.back(), '\n');
  EXPECT_EQ(got.find('\n'), got.size() - 1);
}

TEST_F(LoggingTest, EveryLevelNameIsPaddedToSix) {
  Logger::setLogLevel(Logger::TRACE);
  const std::string head = "20261121 08:15:02.123456Z " + tidField(gettid());
  // TRACE and DEBUG name the function (gtest's TestBody) before the message.
  LOG_TRACE << "t"; int line = __LINE__;
  EXPECT_EQ(lastLine(), head + "TRACE TestBody t" + trailer(line));
  LOG_DEBUG << "d"; line = __LINE__;
  EXPECT_EQ(lastLine(), head + "DEBUG TestBody d" + trailer(line));
  LOG_INFO << "i"; line = __LINE__;
  EXPECT_EQ(lastLine(), head + "INFO  i" + trailer(line));
  LOG_WARN << "w"; line = __LINE__;
  EXPECT_EQ(lastLine(), head + "WARN  w" + trailer(line));
  LOG_ERROR << "e"; line = __LINE__;
  EXPECT_EQ(lastLine(), head + "ERROR e" + trailer(line));
}

TEST_F(LoggingTest, NoZOutsideUtc) {
  Logger::setTimeZone(TimeZone::load("Asia/Shanghai"));
  LOG_WARN << "m"; const int line = __LINE__;
  const std::string got = lastLine();
  EXPECT_EQ(got, "20261121 16:15:02.123456 " + tidField(gettid()) + "WARN  m" + trailer(line));
  EXPECT_EQ(got[24], ' ');
  EXPECT_EQ(Logger::timeZone().name(), "Asia/Shanghai");
}

TEST_F(LoggingTest, FileIsTheBasename) {
  LOG_INFO << "where";
  const std::string got = lastLine();
  EXPECT_NE(got.find(" - Logging_test.cc:"), std::string::npos) << got;
  EXPECT_EQ(got.find('/'), std::string::npos) << got;
}

TEST_F(LoggingTest, EachStatementIsOneOutputCall) {
  LOG_INFO << "one" << ' ' << 1;
  LOG_WARN << "two";
  LOG_ERROR << "";
  const std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), 3u);
  for (const std::string& l : got) {
    EXPECT_EQ(l.find('\n'), l.size() - 1) << l;
  }
  EXPECT_NE(got[0].find("INFO  one 1 - "), std::string::npos);
  EXPECT_NE(got[2].find("ERROR  - "), std::string::npos);
}

// ---- over-long messages -------------------------------------------------------

// A cut line: its message stops at LogStream::kMessageEnd, and the line
// ends in the cut marker and its trailer.
const std::string kCut(LogStream::kCutMarker);

TEST_F(LoggingTest, OverlongLineIsCutButKeepsItsTrailer) {
  const uint64_t cutBefore = Logger::linesTruncated();
  LOG_INFO << std::string(5000, 'x'); const int line = __LINE__;
  const std::string got = lastLine();
  const std::string head = "20261121 08:15:02.123456Z " + tidField(gettid()) + "INFO  ";
  const std::string tail = trailer(line);
  ASSERT_EQ(got.size(), LogStream::kMessageEnd + kCut.size() + tail.size());
  EXPECT_EQ(got, head + std::string(LogStream::kMessageEnd - head.size(), 'x') + kCut + tail);
  EXPECT_EQ(Logger::linesTruncated(), cutBefore + 1);
}

// At the exact boundary: a message that just fits is intact and not
// marked, one byte more loses exactly its last byte and marks the line.
TEST_F(LoggingTest, MessageThatJustFitsIsNotCut) {
  const std::string head = "20261121 08:15:02.123456Z " + tidField(gettid()) + "INFO  ";
  const int line = __LINE__ + 4;
  const std::string tail = trailer(line);
  const size_t room = LogStream::kMessageEnd - head.size();
  auto logMessageOf = [](size_t n) {
    LOG_INFO << std::string(n - 1, 'm') << 'E';
    return lastLine();
  };
  const uint64_t cutBefore = Logger::linesTruncated();
  std::string got = logMessageOf(room - 1);
  EXPECT_EQ(got, head + std::string(room - 2, 'm') + "E" + tail);
  got = logMessageOf(room);
  EXPECT_EQ(got, head + std::string(room - 1, 'm') + "E" + tail);
  EXPECT_EQ(got.size(), LogStream::kMessageEnd + tail.size());
  EXPECT_EQ(Logger::linesTruncated(), cutBefore);
  got = logMessageOf(room + 1);
  EXPECT_EQ(got, head + std::string(room, 'm') + kCut + tail);
  EXPECT_EQ(Logger::linesTruncated(), cutBefore + 1);
}

TEST_F(LoggingTest, OverlongSyserrAndDebugLinesKeepTheirTrailer) {
  Logger::setLogLevel(Logger::TRACE);
  errno = EBADF;
  LOG_SYSERR << std::string(5000, 's'); int line = __LINE__;
  std::string got = lastLine();
  EXPECT_EQ(got.size(), LogStream::kMessageEnd + kCut.size() + trailer(line).size());
  EXPECT_EQ(got.substr(got.size() - trailer(line).size()), trailer(line));
  LOG_DEBUG << std::string(5000, 'd'); line = __LINE__;
  got = lastLine();
  EXPECT_EQ(got.size(), LogStream::kMessageEnd + kCut.size() + trailer(line).size());
  EXPECT_EQ(got.substr(got.size() - trailer(line).size() - kCut.size()), kCut + trailer(line));
}

// Issue #40: a 5,000-byte message with two kv fields and a LogContext
// field keeps all three; the line carries the cut marker and is counted.
TEST_F(LoggingTest, ACutMessageKeepsItsFieldsAndContextAndIsMarked) {
  const uint64_t cutBefore = Logger::linesTruncated();
  {
    LogContext context{{"request_id", "7f3a"}};
    LOG_INFO << std::string(5000, 'x') << kv("user", "alice") << kv("ms", 12);
  }
  const int line = __LINE__ - 2;
  const std::string got = lastLine();
  const std::string head = "20261121 08:15:02.123456Z " + tidField(gettid()) + "INFO  ";
  EXPECT_EQ(got, head + std::string(LogStream::kMessageEnd - head.size(), 'x') +
                     " user=alice ms=12 request_id=7f3a" + kCut + trailer(line));
  EXPECT_LE(got.size(), LogStream::kBufferSize);
  EXPECT_EQ(Logger::linesTruncated(), cutBefore + 1);
}

// ---- macros --------------------------------------------------------------------

// The old `if (enabled) Logger().stream()` macro stole a user's else: with
// the level disabled, the else branch below ran. Each macro must bind the
// user's else to the user's if, whether its own level is on or off.
TEST_F(LoggingTest, MacrosAreSafeInUnbracedIfElse) {
  int elses = 0;
  Logger::setLogLevel(Logger::WARN);  // TRACE..INFO off, WARN and ERROR on
  const bool yes = lines().empty();   // true, but not a constant to the compiler
  if (yes) LOG_TRACE << "a"; else ++elses;
  if (yes) LOG_DEBUG << "a"; else ++elses;
  if (yes) LOG_INFO << "a"; else ++elses;
  if (yes) LOG_WARN << "a"; else ++elses;
  if (yes) LOG_ERROR << "a"; else ++elses;
  if (yes) LOG_SYSERR << "a"; else ++elses;
  EXPECT_EQ(elses, 0);
  EXPECT_EQ(lineCount(), 3u);  // WARN, ERROR, SYSERR

  const bool no = !yes;
  if (no) LOG_TRACE << "b"; else ++elses;
  if (no) LOG_DEBUG << "b"; else ++elses;
  if (no) LOG_INFO << "b"; else ++elses;
  if (no) LOG_WARN << "b"; else ++elses;
  if (no) LOG_ERROR << "b"; else ++elses;
  if (no) LOG_SYSERR << "b"; else ++elses;
  if (no) LOG_FATAL << "b"; else ++elses;
  if (no) LOG_SYSFATAL << "b"; else ++elses;
  EXPECT_EQ(elses, 8);
  EXPECT_EQ(lineCount(), 3u);

  // Nested, and without an else (no warning, no stolen statement).
  if (yes)
    if (yes) LOG_WARN << "nested"; else ++elses;
  else
    elses += 100;
  if (no) LOG_WARN << "unbraced";
  EXPECT_EQ(elses, 8);
  EXPECT_EQ(lineCount(), 4u);
  EXPECT_NE(lastLine().find("WARN  nested"), std::string::npos);
}

// What each level lets through, and that a disabled statement evaluates none
// of its << arguments.
TEST_F(LoggingTest, DisabledLevelsEvaluateNothing) {
  const Logger::LogLevel levels[] = {Logger::TRACE, Logger::DEBUG, Logger::INFO,
                                     Logger::WARN,  Logger::ERROR, Logger::FATAL};
  for (Logger::LogLevel threshold : levels) {
    Logger::setLogLevel(threshold);
    ASSERT_EQ(Logger::logLevel(), threshold);
    struct Statement {
      Logger::LogLevel level;
      void (*run)();
    };
    const Statement statements[] = {
        {Logger::TRACE, [] { LOG_TRACE << sideEffect() << sideEffect(); }},
        {Logger::DEBUG, [] { LOG_DEBUG << sideEffect() << sideEffect(); }},
        {Logger::INFO, [] { LOG_INFO << sideEffect() << sideEffect(); }},
        {Logger::WARN, [] { LOG_WARN << sideEffect() << sideEffect(); }},
        {Logger::ERROR, [] { LOG_ERROR << sideEffect() << sideEffect(); }},
        {Logger::ERROR, [] { LOG_SYSERR << sideEffect() << sideEffect(); }},
    };
    for (const Statement& st : statements) {
      const bool enabled = st.level >= threshold;
      g_sideEffects = 0;
      const size_t before = lineCount();
      st.run();
      EXPECT_EQ(g_sideEffects, enabled ? 2 : 0) << "statement " << st.level << " at " << threshold;
      EXPECT_EQ(lineCount(), before + (enabled ? 1 : 0)) << "statement " << st.level << " at "
                                                         << threshold;
    }
  }
}

// ---- output and flush hooks ----------------------------------------------------

TEST_F(LoggingTest, FlushCallsTheFlushHook) {
  EXPECT_EQ(flushCount(), 0);
  LOG_ERROR << "errors do not flush by themselves";
  EXPECT_EQ(flushCount(), 0);
  Logger::flush();
  EXPECT_EQ(flushCount(), 1);
  Logger::setFlush(nullptr);
  Logger::flush();
  EXPECT_EQ(flushCount(), 1);
}

// ---- flush level -------------------------------------------------------------

TEST_F(LoggingTest, LinesAtOrAboveTheFlushLevelAreFlushedBeforeTheirStatementReturns) {
  EXPECT_EQ(Logger::flushLevel(), Logger::FATAL);
  Logger::setFlushLevel(Logger::WARN);
  LOG_INFO << "below";
  EXPECT_EQ(flushCount(), 0);
  LOG_WARN << "at";
  EXPECT_EQ(flushCount(), 1);
  LOG_ERROR << "above";
  LOG_SYSERR << "above";
  EXPECT_EQ(flushCount(), 3);
  Logger::setFlushLevel(Logger::FATAL);
  LOG_ERROR << "not any more";
  EXPECT_EQ(flushCount(), 3);
  EXPECT_EQ(lineCount(), 5u);
}

// The backend takes 50 ms per write and wakes by itself only every 3 s: the
// ERROR line is in the file when LOG_ERROR returns only because of the flush.
TEST(FlushLevelTest, AnErrorLineIsInTheFileWhenItsStatementReturnsWhileTheBackendIsSlow) {
  muon::test::TempDir dir;
  muon::AsyncLogging log(dir.file("slow"), 1L << 30, 3);
  log.setWriteFunction([](int fd, const char* data, size_t len) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return ::write(fd, data, len);
  });
  auto attached = Logger::attach(log);
  log.start();
  Logger::setFlushLevel(Logger::ERROR);
  LOG_WARN << "the warning before it";
  LOG_ERROR << "the error";
  Logger::setFlushLevel(Logger::FATAL);
  std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  std::string text = muon::test::readFile(files[0]);
  EXPECT_NE(text.find("ERROR the error"), std::string::npos) << text;
  EXPECT_NE(text.find("WARN  the warning before it"), std::string::npos) << text;
}

// With no hooks, a line goes to stdout's descriptor before its statement
// returns, with no flush (LoggingStdoutTest below: in a program of its own).
TEST_F(LoggingTest, DefaultOutputWritesEachLineToStdout) {
  std::fflush(stdout);
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(::fileno(file), STDOUT_FILENO), STDOUT_FILENO);

  Logger::setOutput(&captureOutput);
  Logger::setOutput(nullptr);  // back to the default
  Logger::setFlush(nullptr);
  LOG_INFO << "to stdout"; const int line = __LINE__;

  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  char buf[512];
  const ssize_t n = ::pread(::fileno(file), buf, sizeof buf, 0);
  std::fclose(file);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)),
            "20261121 08:15:02.123456Z " + tidField(gettid()) + "INFO  to stdout" +
                trailer(line));
  EXPECT_EQ(lineCount(), 0u);
}

// ---- the default output into a pipe (systemd, docker, `| tee`) ----------------
// Each case runs log_stdout_child (LogStdoutChild.cc), a program of its own:
// stdio chooses its buffering when a program starts, from what stdout is.

using namespace std::chrono_literals;

// Starts log_stdout_child MODE with stdin, stdout and stderr from the given
// descriptors, which are closed here; the child's pid, or -1.
pid_t startStdoutChild(const char* mode, int in, int out, int err) {
  std::string path = MUON_LOG_STDOUT_CHILD_PATH;
  std::string modeArg = mode;
  char* argv[] = {&path[0], &modeArg[0], nullptr};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    if (::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 ||
        ::dup2(err, STDERR_FILENO) < 0) {
      ::_exit(126);
    }
    ::execv(argv[0], argv);
    ::_exit(127);
  }
  ::close(in);
  ::close(out);
  ::close(err);
  return pid;
}

int openDevNull() { return ::open("/dev/null", O_RDWR | O_CLOEXEC); }

// What `fd` gives until it has given `lines` newlines, EOF, or `deadline`.
std::string readLinesWithin(int fd, int lines, std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string text;
  while (std::count(text.begin(), text.end(), '\n') < lines) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    struct pollfd pfd = {fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

// The exit code of `pid`, or -1 (still running after 10 s: killed, or a signal).
int exitCodeOf(pid_t pid, int* status) {
  if (!test::waitWithDeadline(pid, status, 10s)) return -1;
  return WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

// log_stdout_child in a mode that waits for the end of its stdin, which only
// the test can give, with a pipe as its stdout: what it logged before the
// wait must come through while it waits.
class WaitingStdoutChild {
 public:
  explicit WaitingStdoutChild(const char* mode) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    stdinWrite_ = in[1];
    stdoutRead_ = out[0];
    pid_ = startStdoutChild(mode, in[0], out[1], openDevNull());
  }
  ~WaitingStdoutChild() {
    if (stdinWrite_ >= 0) ::close(stdinWrite_);
    if (stdoutRead_ >= 0) ::close(stdoutRead_);
  }
  bool started() const { return pid_ > 0; }
  std::string readLines(int lines) { return readLinesWithin(stdoutRead_, lines, 10s); }
  void endWait() {
    ::close(stdinWrite_);
    stdinWrite_ = -1;
  }
  // The child's exit code; -1 as exitCodeOf says.
  int exitCode() {
    int status = 0;
    return exitCodeOf(pid_, &status);
  }

 private:
  pid_t pid_ = -1;
  int stdinWrite_ = -1;
  int stdoutRead_ = -1;
};

// stdio would keep the first line in its 4 KiB buffer until exit.
TEST(LoggingStdoutTest, EachLineReachesAPipeWhileTheProgramRuns) {
  WaitingStdoutChild child("wait");
  ASSERT_TRUE(child.started());
  const std::string first = child.readLines(1);
  EXPECT_TRUE(matchesLineRegex(first)) << first;
  EXPECT_NE(first.find("INFO  before the wait - LogStdoutChild.cc:"), std::string::npos) << first;
  child.endWait();
  const std::string second = child.readLines(1);
  EXPECT_NE(second.find("INFO  after the wait"), std::string::npos) << second;
  EXPECT_EQ(child.exitCode(), 0);
}

// What the program printed through stdio before a line comes before it in
// the pipe, while the program still runs: the output keeps its order.
TEST(LoggingStdoutTest, PrintedOutputBeforeALineStaysBeforeIt) {
  WaitingStdoutChild child("printf-first");
  ASSERT_TRUE(child.started());
  const std::string text = child.readLines(2);
  const size_t printed = text.find("printed before the line\n");
  EXPECT_EQ(printed, 0u) << text;
  EXPECT_NE(text.find("INFO  logged after the printf", printed), std::string::npos) << text;
  child.endWait();
  EXPECT_EQ(child.exitCode(), 0);
}

// How log_stdout_child MODE ended, logging into a pipe whose reader has
// gone (its waitpid status); -1 if it could not start or did not end.
int statusIntoAClosedPipe(const char* mode) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return -1;
  ::close(out[0]);
  const pid_t pid = startStdoutChild(mode, openDevNull(), out[1], openDevNull());
  int status = 0;
  return pid > 0 && test::waitWithDeadline(pid, &status, 10s) ? status : -1;
}

// With SIGPIPE ignored each line fails with EPIPE and is dropped, and the
// program goes on.
TEST(LoggingStdoutTest, ClosedPipeDropsTheLinesWhenSigpipeIsIgnored) {
  const int status = statusIntoAClosedPipe("sigpipe-ignored");
  EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// The library leaves SIGPIPE's disposition alone: by default the first line
// into a pipe whose reader has gone ends the program, as it ends `cat`.
TEST(LoggingStdoutTest, ClosedPipeRaisesSigpipeByDefault) {
  const int status = statusIntoAClosedPipe("sigpipe-default");
  EXPECT_TRUE(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) << status;
}

// A signal without SA_RESTART interrupts the write of a line into a full
// pipe (EINTR): the line is written again, whole, once the pipe drains.
TEST(LoggingStdoutTest, InterruptedWriteIsRetried) {
  int out[2], err[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(err, O_CLOEXEC), 0);
  // The smallest pipe, filled, so that the child's write blocks.
  ASSERT_GT(::fcntl(out[1], F_SETPIPE_SZ, 4096), 0);
  const int flags = ::fcntl(out[1], F_GETFL);
  ASSERT_EQ(::fcntl(out[1], F_SETFL, flags | O_NONBLOCK), 0);
  const std::string filler(512, 'x');
  size_t filled = 0;
  ssize_t n;
  while ((n = ::write(out[1], filler.data(), filler.size())) > 0) filled += static_cast<size_t>(n);
  ASSERT_EQ(errno, EAGAIN);
  ASSERT_EQ(::fcntl(out[1], F_SETFL, flags), 0);
  const pid_t pid = startStdoutChild("interrupted", openDevNull(), out[1], err[1]);
  ASSERT_GT(pid, 0);

  // Blocked in write(1, ...): /proc/PID/syscall reads "<SYS_write> 0x1 ...".
  const std::string blocked = std::to_string(SYS_write) + " 0x1 ";
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (test::readFile("/proc/" + std::to_string(pid) + "/syscall").rfind(blocked, 0) != 0 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(1ms);
  }
  ::kill(pid, SIGUSR1);
  // The handler's '!' comes after the write has failed with EINTR: nothing
  // was read yet, so the pipe was still full.
  EXPECT_EQ(readLinesWithin(err[0], 1, 10s), "!\n");

  const std::string text = readLinesWithin(out[0], 1, 10s);
  ASSERT_GE(text.size(), filled);
  const std::string line = text.substr(filled);
  EXPECT_TRUE(matchesLineRegex(line)) << line;
  EXPECT_NE(line.find("INFO  written after an interruption"), std::string::npos) << line;
  int status = 0;
  EXPECT_EQ(exitCodeOf(pid, &status), 0) << status;
  ::close(out[0]);
  ::close(err[0]);
}

// ---- LOG_SYSERR, LOG_FATAL, LOG_SYSFATAL ---------------------------------------

int clobberErrno() {
  errno = EACCES;
  return 0;
}

// errno is taken when the statement starts, before its arguments run.
TEST_F(LoggingTest, SyserrAppendsTheErrnoOfTheStatementStart) {
  errno = ENOENT;
  LOG_SYSERR << "open /x " << clobberErrno(); const int line = __LINE__;
  EXPECT_EQ(lastLine(), "20261121 08:15:02.123456Z " + tidField(gettid()) + "ERROR open /x 0: " +
                            std::strerror(ENOENT) + " (errno=" + std::to_string(ENOENT) + ")" +
                            trailer(line));
  errno = ENOENT;
  LOG_ERROR << "plain";
  EXPECT_EQ(lastLine().find("errno"), std::string::npos);
}

TEST(StrerrorTest, ThreadLocalTextForAnyErrno) {
  EXPECT_STREQ(strerror_tl(ENOENT), std::strerror(ENOENT));
  EXPECT_STREQ(strerror_tl(EINTR), std::strerror(EINTR));
  EXPECT_STREQ(strerror_tl(123456), "Unknown error 123456");
}

using LoggingDeathTest = LoggingTest;

TEST_F(LoggingDeathTest, FatalWritesTheLineFlushesAndAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        muon::test::logToStderrMarkingFlushes();
        LOG_FATAL << "cannot go on " << 42;
      },
      ::testing::KilledBySignal(SIGABRT),
      "Z +[0-9]+ FATAL cannot go on 42 - Logging_test\\.cc:[0-9]+\n<flushed after the line>\n");
}

TEST_F(LoggingDeathTest, FatalIgnoresTheLogLevel) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Logger::setLogLevel(Logger::FATAL);
        muon::test::logToStderrMarkingFlushes();
        LOG_FATAL << "still printed";
      },
      ::testing::KilledBySignal(SIGABRT), "FATAL still printed - Logging_test\\.cc:[0-9]+\n<flushed after the line>");
}

TEST_F(LoggingDeathTest, SysfatalAppendsErrnoAndAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        muon::test::logToStderrMarkingFlushes();
        errno = EPIPE;
        LOG_SYSFATAL << "write";
      },
      ::testing::KilledBySignal(SIGABRT),
      "FATAL write: Broken pipe \\(errno=32\\) - Logging_test\\.cc:[0-9]+\n<flushed after the line>");
}

// ---- the cached date-time -------------------------------------------------------

// Each pair: the last microsecond of a day and the first of the next. The
// cache is keyed by second, so every step must rebuild the whole date.
TEST_F(LoggingTest, DateTimeIsRightAcrossDayMonthAndYearEnds) {
  struct Case {
    int64_t lastSecond;  // 23:59:59 of the earlier day
    const char* before;
    const char* after;
  };
  const Case cases[] = {
      {1798761599, "20261231 23:59:59.999999Z", "20270101 00:00:00.000000Z"},
      {1777593599, "20260430 23:59:59.999999Z", "20260501 00:00:00.000000Z"},
      {1835395199, "20280228 23:59:59.999999Z", "20280229 00:00:00.000000Z"},  // leap year
      {1835481599, "20280229 23:59:59.999999Z", "20280301 00:00:00.000000Z"},
      {1803859199, "20270228 23:59:59.999999Z", "20270301 00:00:00.000000Z"},
      {951782399, "20000228 23:59:59.999999Z", "20000229 00:00:00.000000Z"},   // 400 divides 2000
      {4107542399, "21000228 23:59:59.999999Z", "21000301 00:00:00.000000Z"},  // 100 divides 2100
      {-1, "19691231 23:59:59.999999Z", "19700101 00:00:00.000000Z"},
  };
  for (const Case& c : cases) {
    const int64_t lastUs = c.lastSecond * 1000000 + 999999;
    EXPECT_EQ(dateTimeAt(lastUs - 999999), std::string(c.before).substr(0, 18) + "000000Z");
    EXPECT_EQ(dateTimeAt(lastUs), c.before);
    EXPECT_EQ(dateTimeAt(lastUs + 1), c.after);
    // Back a second: the cache must not only ever move forward.
    EXPECT_EQ(dateTimeAt(lastUs), c.before);
  }
}

TEST_F(LoggingTest, MicrosecondsChangeWithinACachedSecond) {
  const int64_t second = 1795248902LL * 1000000;
  EXPECT_EQ(dateTimeAt(second), "20261121 08:15:02.000000Z");
  EXPECT_EQ(dateTimeAt(second + 1), "20261121 08:15:02.000001Z");
  EXPECT_EQ(dateTimeAt(second + 10), "20261121 08:15:02.000010Z");
  EXPECT_EQ(dateTimeAt(second + 100200), "20261121 08:15:02.100200Z");
  EXPECT_EQ(dateTimeAt(second + 999999), "20261121 08:15:02.999999Z");
  EXPECT_EQ(dateTimeAt(second + 1000000), "20261121 08:15:03.000000Z");
}

// setTimeZone between two lines of the same second (cache hit on the second)
// must still change the time printed and add or drop the 'Z'.
TEST_F(LoggingTest, TimeZoneChangeWithinASecondIsSeen) {
  const int64_t us = 1795248902123456;
  EXPECT_EQ(dateTimeAt(us), "20261121 08:15:02.123456Z");
  Logger::setTimeZone(TimeZone::load("Asia/Shanghai"));
  EXPECT_EQ(dateTimeAt(us), "20261121 16:15:02.123456");
  Logger::setTimeZone(TimeZone::fixed(-(9 * 3600 + 1800), "X"));
  EXPECT_EQ(dateTimeAt(us), "20261120 22:45:02.123456");
  Logger::setTimeZone(TimeZone());
  EXPECT_EQ(dateTimeAt(us), "20261121 08:15:02.123456Z");
  // The zone's offset, not a cached one, across a DST change.
  Logger::setTimeZone(TimeZone::load("America/New_York"));
  const int64_t springForward = 1772953200LL * 1000000;  // 2026-03-08 07:00:00 UTC
  EXPECT_EQ(dateTimeAt(springForward - 1), "20260308 01:59:59.999999");
  EXPECT_EQ(dateTimeAt(springForward), "20260308 03:00:00.000000");
}

// The per-line cost: with the thread id and the second cached, the header
// (micros included) is written without snprintf.
TEST_F(LoggingTest, LinesInACachedSecondCallNoSnprintf) {
  const int64_t second = 1795248902LL * 1000000;
  g_nowUs = second;
  LOG_INFO << "caches the tid and the second";
  // The counter must see calls, or a zero below would prove nothing.
  volatile int one = 1;
  char probe[8];
  const int beforeProbe = g_snprintfCalls.load();
  std::snprintf(probe, sizeof probe, "%d", one);
  ASSERT_EQ(g_snprintfCalls.load(), beforeProbe + 1);

  const int before = g_snprintfCalls.load();
  for (int i = 0; i < 100; ++i) {
    g_nowUs = second + i * 7919;
    LOG_WARN << "line " << i << ' ' << 0.25;
  }
  EXPECT_EQ(g_snprintfCalls.load(), before);
  EXPECT_EQ(lastLine().substr(0, 25), "20261121 08:15:02.783981Z");
}

// The date-time part is formatted once per second and per thread, and
// reused by every other line of that second (the lines above show it comes
// out right; this shows it is not made again).
TEST_F(LoggingTest, DateTimeIsFormattedOncePerSecondPerThread) {
  const int64_t second = 1795248902LL * 1000000;
  g_nowUs = second - 1;
  LOG_INFO << "the second before";
  const uint64_t before = muon::detail::dateTimeFormatsInThisThread();
  for (int i = 0; i < 100; ++i) {
    g_nowUs = second + i * 9973;
    LOG_INFO << "line " << i;
  }
  EXPECT_EQ(muon::detail::dateTimeFormatsInThisThread(), before + 1);
  g_nowUs = second + 1000000;
  LOG_INFO << "the next second";
  EXPECT_EQ(muon::detail::dateTimeFormatsInThisThread(), before + 2);
  EXPECT_EQ(lastLine().substr(0, 25), "20261121 08:15:03.000000Z");
  uint64_t otherThread = 0;
  std::thread t([&] {
    LOG_INFO << "same second, another thread";
    otherThread = muon::detail::dateTimeFormatsInThisThread();
  });
  t.join();
  EXPECT_EQ(otherThread, 1u);  // its own cache, filled once
}

// Each thread has its own cache; a change made by one thread reaches the
// cache of another, even within the same second.
TEST_F(LoggingTest, OtherThreadsSeeATimeZoneChange) {
  std::promise<void> firstLogged;
  std::promise<void> zoneChanged;
  std::future<void> zoneChangedFuture = zoneChanged.get_future();
  std::string first;
  std::string second;
  std::thread t([&] {
    first = logAt(1795248902123456);
    firstLogged.set_value();
    zoneChangedFuture.wait();
    second = logAt(1795248902123456);
  });
  firstLogged.get_future().wait();
  Logger::setTimeZone(TimeZone::load("Asia/Shanghai"));
  zoneChanged.set_value();
  t.join();
  EXPECT_EQ(first.substr(0, 25), "20261121 08:15:02.123456Z");
  EXPECT_EQ(second.substr(0, 25), "20261121 16:15:02.123456 ");
}

// Threads logging while another flips the zone: each line is whole, its
// time and its 'Z' match one zone or the other, and its tid is its thread's.
TEST_F(LoggingTest, ConcurrentLinesStayWholeAndConsistent) {
  constexpr int kThreads = 4;
  constexpr int kLines = 300;
  std::atomic<bool> stop{false};
  const TimeZone shanghai = TimeZone::load("Asia/Shanghai");
  std::thread flipper([&] {
    bool utc = false;
    while (!stop.load()) {
      Logger::setTimeZone(utc ? TimeZone() : shanghai);
      utc = !utc;
    }
  });
  std::vector<int> tids(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&tids, i] {
      tids[static_cast<size_t>(i)] = gettid();
      for (int n = 0; n < kLines; ++n) LOG_INFO << "thread " << i << " line " << n;
    });
  }
  for (std::thread& t : threads) t.join();
  stop = true;
  flipper.join();

  const std::vector<std::string> got = lines();
  ASSERT_EQ(got.size(), static_cast<size_t>(kThreads * kLines));
  std::vector<int> perThread(kThreads);
  for (const std::string& l : got) {
    ASSERT_TRUE(matchesLineRegex(l)) << l;
    ParsedLine p;
    ASSERT_TRUE(parseLine(l, &p)) << l;
    ASSERT_EQ(p.dateTime, p.utc ? "20261121 08:15:02.123456" : "20261121 16:15:02.123456") << l;
    ASSERT_EQ(p.level, "INFO  ") << l;
    ASSERT_EQ(p.message.compare(0, 7, "thread "), 0) << l;
    const int thread = p.message[7] - '0';
    ASSERT_TRUE(thread >= 0 && thread < kThreads) << l;
    ASSERT_EQ(p.message.compare(8, 6, " line "), 0) << l;
    ASSERT_EQ(p.tid, tids[static_cast<size_t>(thread)]) << l;
    ++perThread[static_cast<size_t>(thread)];
  }
  for (int count : perThread) EXPECT_EQ(count, kLines);
}

// ---- thread id -------------------------------------------------------------------

TEST_F(LoggingTest, LinesCarryTheLoggingThreadsTid) {
  LOG_INFO << "main";
  const std::string mainLine = lastLine();
  EXPECT_EQ(mainLine.substr(26, tidField(gettid()).size()), tidField(gettid()));
  EXPECT_EQ(CurrentThread::tid(), gettid());
  int otherTid = 0;
  std::string otherLine;
  std::thread t([&] {
    otherTid = gettid();
    LOG_INFO << "other";
    otherLine = lastLine();
  });
  t.join();
  EXPECT_NE(otherTid, gettid());
  EXPECT_EQ(otherLine.substr(26, tidField(otherTid).size()), tidField(otherTid));
}

// The child's line goes to the parent through a pipe (a capture in the
// child's memory is not seen by the parent), one write(2).
int g_childPipe = -1;
void pipeOutput(const char* msg, size_t len) {
  ssize_t n = ::write(g_childPipe, msg, len);
  (void)n;
}

// Forks a child that logs one line "child" through a pipe; returns that
// line, and whether CurrentThread::tid() in the child was its pid.
std::string lineOfAForkedChild(pid_t* childPid, bool* childTidIsItsPid) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    g_childPipe = fds[1];
    Logger::setOutput(&pipeOutput);
    LOG_INFO << "child";
    ::_exit(CurrentThread::tid() == ::getpid() ? 0 : 1);
  }
  ::close(fds[1]);
  std::string child;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) child.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  *childPid = pid;
  *childTidIsItsPid = ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return child;
}

// The tid is cached per thread; a forked child is a new thread and must not
// print its parent's cached id.
TEST_F(LoggingTest, ForkedChildLogsItsOwnTid) {
  LOG_INFO << "parent";  // makes sure the parent's tid is cached
  const int parentTid = gettid();
  pid_t pid = 0;
  bool tidIsPid = false;
  const std::string child = lineOfAForkedChild(&pid, &tidIsPid);
  EXPECT_TRUE(tidIsPid) << "CurrentThread::tid() in the child is not its pid";
  EXPECT_EQ(child.substr(26, tidField(pid).size()), tidField(pid)) << child;
  EXPECT_NE(child.find("INFO  child"), std::string::npos) << child;
  // And the parent keeps its own.
  LOG_INFO << "parent again";
  EXPECT_EQ(lastLine().substr(26, tidField(parentTid).size()), tidField(parentTid));
}

// The same with the default clock, whose lines in a second the thread has
// already logged in skip the clock call: the child's first line still
// carries its own id.
TEST_F(LoggingTest, ForkedChildLogsItsOwnTidWithTheDefaultClock) {
  Logger::setClock(nullptr);
  LOG_INFO << "parent";
  LOG_INFO << "parent";
  pid_t pid = 0;
  bool tidIsPid = false;
  const std::string child = lineOfAForkedChild(&pid, &tidIsPid);
  EXPECT_TRUE(tidIsPid);
  EXPECT_EQ(child.substr(26, tidField(pid).size()), tidField(pid)) << child;
}

// ---- the default clock ---------------------------------------------------------

// Microseconds since the epoch of a UTC line's date-time.
int64_t lineMicros(const std::string& line) {
  struct tm tm = {};
  if (::strptime(line.substr(0, 17).c_str(), "%Y%m%d %H:%M:%S", &tm) == nullptr) return -1;
  return static_cast<int64_t>(::timegm(&tm)) * 1000000 + std::stoll(line.substr(18, 6));
}

// Keeps the newest line only: the test below logs for as long as it takes to
// cross a second, and looks at each line once.
std::string g_lastLine;
void keepLastLine(const char* msg, size_t len) { g_lastLine.assign(msg, len); }

// With the default clock (TscClock), each line's time lies between
// clock_gettime readings taken around its statement, give or take
// TscClock's tolerance: across a second boundary (the cached prefix and the
// microseconds change together) and several calibrations.
TEST_F(LoggingTest, DefaultClockLinesCarryTheWallClockTime) {
  Logger::setClock(nullptr);
  Logger::setOutput(&keepLastLine);
  constexpr int64_t kToleranceUs = 50;
  while (Timestamp::now().microSecondsSinceEpoch() % 1000000 < 800000) {
  }
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  int64_t worst = 0;
  long count = 0;
  std::string worstLine;
  while (std::chrono::steady_clock::now() < end) {
    int64_t before = Timestamp::now().microSecondsSinceEpoch();
    LOG_INFO << "x";
    int64_t after = Timestamp::now().microSecondsSinceEpoch();
    int64_t t = lineMicros(g_lastLine);
    int64_t error = t < before ? before - t : (t > after ? t - after : 0);
    if (error > worst) {
      worst = error;
      worstLine = g_lastLine;
    }
    ++count;
  }
  EXPECT_GT(count, 1000);
  EXPECT_LE(worst, kToleranceUs) << worstLine;
}

}  // namespace
}  // namespace muon
