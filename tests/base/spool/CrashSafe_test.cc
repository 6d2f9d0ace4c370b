// Crash-safe AsyncLogging: processes that die in every way a process dies,
// and the recovery that follows. The property is the same throughout: every
// line whose LOG_* statement returned is in the log files exactly once, each
// thread's lines in order, no line cut or glued to another.
//  - Torture: a child logs from 4 threads and is SIGKILLed at a random
//    moment, 100 times in a row; each child recovers the one before it.
//  - Recovery or the backend killed in the middle of a write (a write seam
//    that SIGKILLs the process after N bytes): exactly once all the same.
//  - SIGSEGV without a handler, abort(), _exit(): nothing lost.
//  - A live process's spool is never touched.
//  - The default mode's loss is measured beside it (KillNine): whole lines, a
//    prefix of each thread's lines, the loss bounded by the buffers.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ChildProcess.h"
#include "DropReportLine.h"
#include "EveryStatement.h"
#include "NumberedLine.h"
#include "TempDir.h"
#include "TextScan.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/LogAttachment.h"
#include "muon/base/LogFile.h"
#include "muon/base/Logging.h"
#include "muon/base/SpoolRecovery.h"

using muon::AsyncLogging;
using muon::LogFile;
using muon::Logger;
using muon::test::scanLiteral;
using muon::test::scanNumber;
using muon::test::TempDir;
using muon::test::waitWithDeadline;

namespace {

AsyncLogging::Options crashSafe(AsyncLogging::OverflowPolicy policy = AsyncLogging::kBlock) {
  AsyncLogging::Options o;
  o.crashSafe = true;
  o.policy = policy;
  o.flushInterval = 1;
  return o;
}

// A write seam that lets `budget` bytes through and then kills the process
// in the middle of the write that crosses it (the bytes before the budget
// are written first): a death at a byte chosen by the test.
std::atomic<long> g_writeBudget{0};
ssize_t writeThenDie(int fd, const char* data, size_t len) {
  long left = g_writeBudget.load();
  if (static_cast<long>(len) < left) {
    g_writeBudget -= static_cast<long>(len);
    return ::write(fd, data, len);
  }
  if (left > 0) {
    ssize_t n = ::write(fd, data, static_cast<size_t>(left));
    (void)n;
  }
  ::raise(SIGKILL);
  return -1;
}

constexpr off_t kNoRoll = off_t{1} << 40;

// ---- reading the files back ----------------------------------------------

// The message every test logs: "cs k=<run> t=<thread> seq=<n> <payload>".
struct Line {
  long run = 0;
  long thread = 0;
  long seq = 0;
};

const std::string kPayload(40, 'x');

// A whole log line holding exactly one of our messages.
bool parse(const std::string& line, Line* out) {
  size_t pos = line.find(" INFO  cs k=");
  if (pos == std::string::npos || line.find(" cs k=", pos + 8) != std::string::npos) return false;
  pos += std::strlen(" INFO  cs k=");
  long source = 0;
  return scanNumber(line, &pos, &out->run) && scanLiteral(line, &pos, " t=") &&
         scanNumber(line, &pos, &out->thread) && scanLiteral(line, &pos, " seq=") &&
         scanNumber(line, &pos, &out->seq) && scanLiteral(line, &pos, " ") &&
         scanLiteral(line, &pos, kPayload.c_str()) && scanLiteral(line, &pos, " - CrashSafe_test.cc:") &&
         scanNumber(line, &pos, &source) && pos == line.size();
}

// The pid in a log file's name: basename.YYYYmmdd-HHMMSS.host.pid.log[.N].
long pidOfLogFile(const std::string& path) {
  size_t log = path.rfind(".log");
  size_t dot = path.rfind('.', log - 1);
  return std::atol(path.substr(dot + 1, log - dot - 1).c_str());
}

// The log files of `basename` in `dir`, in the order they were written:
// by the rank of the process that wrote them (`order`, pid -> rank), then
// by the time in the name and the roll number.
std::vector<std::string> logFilesInOrder(const TempDir& dir, const std::string& basename,
                                         const std::map<long, long>& order) {
  struct Key {
    long rank;
    std::string time;
    long roll;
    std::string path;
  };
  std::vector<Key> keys;
  for (const std::string& f : dir.files()) {
    std::string name = f.substr(dir.path().size() + 1);
    if (name.compare(0, basename.size() + 1, basename + ".") != 0 ||
        name.find(".log") == std::string::npos) {
      continue;
    }
    long pid = pidOfLogFile(f);
    auto it = order.find(pid);
    // Not listed: children forked one after another, so pids rise with time.
    long rank = it == order.end() ? pid : it->second;
    size_t log = f.rfind(".log");
    long roll = log + 4 < f.size() ? std::atol(f.c_str() + log + 5) : 0;
    keys.push_back({rank, name.substr(basename.size() + 1, 15), roll, f});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.rank, a.time, a.roll) < std::tie(b.rank, b.time, b.roll);
  });
  std::vector<std::string> result;
  for (const Key& k : keys) result.push_back(k.path);
  return result;
}

// Reads every line of `files` in order and checks each (run, thread) sees
// 1, 2, 3, ... with no gap, no repeat and nothing malformed. Returns the
// last sequence number seen per (run, thread) and counts the lines.
struct Census {
  std::map<std::pair<long, long>, long> last;
  long lines = 0;
  long recoveredHeaders = 0;
  std::vector<std::string> problems;
};

// lastLineMayBeCut: the default mode's write(2) of a big batch can stop at
// a page boundary when the process dies; the file's last line may then be
// the beginning of a line, which is not counted.
Census census(const std::vector<std::string>& files, bool lastLineMayBeCut = false) {
  Census c;
  for (const std::string& f : files) {
    bool unterminated = false;
    std::vector<std::string> lines = muon::test::readLines(f, &unterminated);
    if (unterminated && lastLineMayBeCut) {
      if (!lines.back().empty() && !std::isdigit(static_cast<unsigned char>(lines.back()[0]))) {
        c.problems.push_back("a cut line that is not the start of a line: " + lines.back());
      }
      lines.pop_back();
      unterminated = false;
    }
    for (const std::string& line : lines) {
      if (line.compare(0, 10, "Recovered ") == 0) {
        ++c.recoveredHeaders;
        continue;
      }
      Line l;
      if (!parse(line, &l)) {
        if (c.problems.size() < 5) c.problems.push_back("malformed in " + f + ": " + line);
        continue;
      }
      long& last = c.last[{l.run, l.thread}];
      if (l.seq != last + 1 && c.problems.size() < 5) {
        c.problems.push_back("run " + std::to_string(l.run) + " thread " +
                             std::to_string(l.thread) + ": seq " + std::to_string(l.seq) +
                             " after " + std::to_string(last) + " in " + f);
      }
      last = std::max(last, l.seq);
      ++c.lines;
    }
    if (unterminated && c.problems.size() < 5) c.problems.push_back("unterminated " + f);
  }
  return c;
}

// One thread's lines 1..n, each once and in order, in the log files of
// processes forked one after another.
Census expectEachLineOnce(const TempDir& dir, long n) {
  Census c = census(logFilesInOrder(dir, "cs", {}));
  for (const std::string& p : c.problems) ADD_FAILURE() << p;
  EXPECT_EQ(c.lines, n);
  EXPECT_EQ((c.last[{0, 0}]), n);
  return c;
}

size_t spoolsIn(const TempDir& dir) {
  size_t n = 0;
  for (const std::string& f : dir.files()) {
    if (f.find(".spool") != std::string::npos) ++n;
  }
  return n;
}

// Runs `body` in a child and returns its wait status (-1 if it hung).
template <typename Body>
int runChild(Body&& body, std::chrono::seconds deadline = std::chrono::seconds(60)) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  return pid > 0 && waitWithDeadline(pid, &status, deadline) ? status : -1;
}

// In a fresh process, recovers whatever dead spools `basename` has, as a
// restarting program does.
void recoverInChild(const std::string& basename) {
  int status = runChild([&] { AsyncLogging log(basename, kNoRoll, crashSafe()); });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// ---- the torture ---------------------------------------------------------

constexpr int kRuns = 100;
constexpr int kThreads = 4;

struct TortureShared {
  std::atomic<long> acked[kRuns][kThreads];
  std::atomic<long> pid[kRuns];
};

TEST(CrashSafeTorture, KilledAHundredTimesLosesNoAcknowledgedLine) {
  TempDir dir;
  const std::string base = dir.file("cs");
  void* page = ::mmap(nullptr, sizeof(TortureShared), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* shared = new (page) TortureShared();
  const unsigned seed = static_cast<unsigned>(std::random_device()());
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delayMs(0, 50);
  std::map<long, long> order;  // pid -> run
  int killedWhileLogging = 0;
  for (int run = 0; run < kRuns; ++run) {
    std::fflush(stdout);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // A small roll size: kills also land in the middle of rolls.
      AsyncLogging log(base, 256 * 1024, crashSafe());
      if (!log.stats().crashSafe) ::_exit(3);
      auto attached = Logger::attach(log);
      log.start();
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([run, t, shared] {
          for (long seq = 1;; ++seq) {
            LOG_INFO << "cs k=" << run << " t=" << t << " seq=" << seq << ' ' << kPayload;
            shared->acked[run][t].store(seq, std::memory_order_release);
            // Bursts of 64 lines: some kills come in a burst, some between.
            if (seq % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(500));
          }
        });
      }
      for (std::thread& th : threads) th.join();
      ::_exit(1);
    }
    shared->pid[run] = pid;
    order[pid] = run;
    // Even runs count from the fork, so some kills land in start-up and in
    // the recovery of the run before; odd ones from the first line logged.
    if (run % 2 == 1) {
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (shared->acked[run][0].load() == 0 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs(random)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_TRUE(waitWithDeadline(pid, &status, std::chrono::seconds(30)));
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "run " << run << " ended with status " << status;
    if (shared->acked[run][0].load() > 0) ++killedWhileLogging;
  }
  // The last one is recovered by this process, as a restart would.
  {
    AsyncLogging last(base, kNoRoll, crashSafe());
    order[::getpid()] = kRuns;
    EXPECT_TRUE(last.stats().crashSafe);
  }
  EXPECT_EQ(spoolsIn(dir), 0u) << "every spool recovered and removed";

  Census c = census(logFilesInOrder(dir, "cs", order));
  for (const std::string& p : c.problems) ADD_FAILURE() << p;
  long acked = 0, missing = 0;
  for (int run = 0; run < kRuns; ++run) {
    for (int t = 0; t < kThreads; ++t) {
      long a = shared->acked[run][t].load();
      long seen = c.last[{run, t}];
      acked += a;
      // Lines committed but not yet acknowledged when the kill came may be
      // there too: at most one per thread.
      if (seen < a) missing += a - seen;
      EXPECT_LE(seen, a + 1) << "run " << run << " thread " << t;
    }
  }
  EXPECT_EQ(missing, 0) << "acknowledged lines lost (seed " << seed << ")";
  EXPECT_GE(killedWhileLogging, kRuns / 2) << "most kills should land while logging";
  std::printf("[ crash    ] %d kills (%d while logging, seed %u): %ld lines acknowledged, "
              "%ld in the files, %ld lost, %ld recovery headers\n",
              kRuns, killedWhileLogging, seed, acked, c.lines, missing, c.recoveredHeaders);
  ::munmap(page, sizeof(TortureShared));
}

// ---- killed in the middle of a write -------------------------------------

// A dead process's spool with `lines` lines in `buffers`-ish 4 MiB buffers,
// none written: the child appends without a backend and leaves by _exit().
void leaveDeadSpool(const std::string& base, long lines) {
  int status = runChild([&] {
    AsyncLogging log(base, kNoRoll, crashSafe());
    auto attached = Logger::attach(log);
    for (long seq = 1; seq <= lines; ++seq) {
      LOG_INFO << "cs k=0 t=0 seq=" << seq << ' ' << kPayload;
    }
    ::_exit(0);
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// Recovers `base`'s dead spools in a child, working in `cwd` ("": this
// process's), that dies after `budget` bytes of its output.
void killRecoveryAfter(long budget, const std::string& cwd, const std::string& base) {
  int status = runChild([&] {
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(9);
    LogFile out(base, kNoRoll, false);
    g_writeBudget = budget;
    out.setWriteFunction(&writeThenDie);
    muon::recoverDeadSpools(base, &out);
    ::_exit(0);
  });
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

// A crash-safe child, working in `cwd` ("": this process's), logs `lines`
// lines before start(); its backend dies after `budget` bytes of the write
// that flush() makes. With `moveTo`, the child changes its working directory
// to it once its AsyncLogging is made.
void killBackendAfter(long budget, const std::string& cwd, const std::string& base, long lines,
                      const std::string& moveTo = "") {
  int status = runChild([&] {
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(9);
    AsyncLogging log(base, kNoRoll, crashSafe());
    if (!moveTo.empty() && ::chdir(moveTo.c_str()) != 0) ::_exit(10);
    g_writeBudget = budget;
    log.setWriteFunction(&writeThenDie);
    auto attached = Logger::attach(log);
    for (long seq = 1; seq <= lines; ++seq) {
      LOG_INFO << "cs k=0 t=0 seq=" << seq << ' ' << kPayload;
    }
    log.start();
    log.flush();  // the backend dies in this write
    ::_exit(4);
  });
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

class RecoveryKilled : public ::testing::TestWithParam<long> {};

TEST_P(RecoveryKilled, AtAnyByteAndRunAgainWritesEachLineOnce) {
  TempDir dir;
  const std::string base = dir.file("cs");
  const long kLines = 150000;  // ~17 MB: five buffers
  leaveDeadSpool(base, kLines);
  ASSERT_EQ(spoolsIn(dir), 1u);
  ASSERT_NO_FATAL_FAILURE(killRecoveryAfter(GetParam(), "", base));
  ASSERT_EQ(spoolsIn(dir), 1u) << "a recovery that died must leave the spool";
  recoverInChild(base);
  EXPECT_EQ(spoolsIn(dir), 0u);

  expectEachLineOnce(dir, kLines);
}

INSTANTIATE_TEST_SUITE_P(Bytes, RecoveryKilled,
                         ::testing::Values(0L, 50L, 4000000L, 4194304L + 200L, 9000000L,
                                           15000000L));

class BackendKilled : public ::testing::TestWithParam<long> {};

TEST_P(BackendKilled, InTheMiddleOfAWriteLosesAndRepeatsNothing) {
  TempDir dir;
  const std::string base = dir.file("cs");
  const long kLines = 100000;
  ASSERT_NO_FATAL_FAILURE(killBackendAfter(GetParam(), "", base, kLines));
  recoverInChild(base);
  EXPECT_EQ(spoolsIn(dir), 0u);
  EXPECT_EQ(expectEachLineOnce(dir, kLines).recoveredHeaders, 1);
}

INSTANTIATE_TEST_SUITE_P(Bytes, BackendKilled,
                         ::testing::Values(0L, 1000L, 4194000L, 4194304L + 4096L, 7000000L));

// ---- other deaths ----------------------------------------------------------

enum class Death { kSegv, kAbort, kExit };

class Dies : public ::testing::TestWithParam<Death> {};

TEST_P(Dies, WithoutAHandlerAndLosesNothing) {
  TempDir dir;
  const std::string base = dir.file("cs");
  const long kLines = 60000;
  int status = runChild([&] {
    AsyncLogging log(base, kNoRoll, crashSafe());
    auto attached = Logger::attach(log);
    log.start();
    for (long seq = 1; seq <= kLines; ++seq) {
      LOG_INFO << "cs k=0 t=0 seq=" << seq << ' ' << kPayload;
    }
    switch (GetParam()) {
      case Death::kSegv:
        ::signal(SIGSEGV, SIG_DFL);  // no handler, not even a sanitizer's
        ::raise(SIGSEGV);
        break;
      case Death::kAbort:
        ::signal(SIGABRT, SIG_DFL);
        std::abort();
      case Death::kExit:
        ::_exit(0);
    }
    ::_exit(5);
  });
  ASSERT_NE(status, -1);
  recoverInChild(base);
  EXPECT_EQ(spoolsIn(dir), 0u);
  expectEachLineOnce(dir, kLines);
}

INSTANTIATE_TEST_SUITE_P(Deaths, Dies,
                         ::testing::Values(Death::kSegv, Death::kAbort, Death::kExit),
                         [](const ::testing::TestParamInfo<Death>& p) {
                           return p.param == Death::kSegv    ? std::string("Segv")
                                  : p.param == Death::kAbort ? std::string("Abort")
                                                             : std::string("Exit");
                         });

// ---- a relative basename, recovered from another working directory --------

// Who recovers a dead process's spool: the program started again, or muon-recover.
enum class Recoverer { kProgram, kTool };

void PrintTo(Recoverer r, std::ostream* os) {
  *os << (r == Recoverer::kProgram ? "Program" : "MuonRecover");
}

std::string recovererName(const ::testing::TestParamInfo<Recoverer>& p) {
  return ::testing::PrintToString(p.param);
}

// Recovers the dead spools of `base` (a basename relative to `cwd`) as
// `who` does it, working in `cwd`.
void recoverFrom(Recoverer who, const std::string& cwd, const std::string& base) {
  int status = 0;
  if (who == Recoverer::kProgram) {
    status = runChild([&] {
      if (::chdir(cwd.c_str()) != 0) ::_exit(9);
      AsyncLogging log(base, kNoRoll, crashSafe());
    });
  } else {
    std::string dir = base.substr(0, base.rfind('/'));
    std::fflush(stdout);
    status = std::system(("cd '" + cwd + "' && " MUON_RECOVER_PATH " '" + dir + "' >/dev/null").c_str());
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// `path` relative to "/", where the recoveries below work.
std::string fromRoot(const std::string& path) { return path.substr(1); }

// Recorded lines (a statement's head as text, its operands recorded) of a
// process killed before writing them: a recovery that did not run the
// statements (muon-recover, or a program started again) writes exactly the
// lines the statements would have made.
class RecordedLines : public ::testing::TestWithParam<Recoverer> {};

muon::Timestamp fixedClock() { return muon::Timestamp(1764115200LL * 1000000 + 654321); }
std::string* g_direct = nullptr;
void keepDirect(const char* line, size_t len) { g_direct->append(line, len); }

TEST_P(RecordedLines, OfAKilledProcessAreRecoveredAsItsStatementsWouldHaveWrittenThem) {
  TempDir dir;
  const std::string base = dir.file("cs");
  const std::string expectedFile = dir.file("expected.txt");
  int status = runChild([&] {
    Logger::setLogLevel(Logger::TRACE);
    Logger::setClock(&fixedClock);
    std::string direct;
    g_direct = &direct;
    Logger::setOutput(&keepDirect);
    muon::test::logEveryKindOfStatement();  // the rate limit's counts, as below
    direct.clear();
    muon::test::logEveryKindOfStatement();
    std::FILE* f = std::fopen(expectedFile.c_str(), "w");
    if (!f || std::fwrite(direct.data(), 1, direct.size(), f) != direct.size()) ::_exit(4);
    std::fclose(f);
    AsyncLogging log(base, kNoRoll, crashSafe());
    if (!log.stats().crashSafe || log.recordedLineGate() == nullptr) ::_exit(3);
    auto attached = Logger::attach(log);
    muon::test::logEveryKindOfStatement();  // not started: all in the spool
    ::raise(SIGKILL);
  });
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  const std::vector<std::string> spools = muon::findSpools(dir.path(), "cs");
  ASSERT_EQ(spools.size(), 1u);
  {
    const std::string image = muon::test::readFile(spools[0]);
    muon::SpoolContents contents;
    std::string error;
    ASSERT_TRUE(muon::readSpool(image.data(), image.size(), &contents, &error)) << error;
    size_t recorded = 0;
    for (const auto& b : contents.buffers) {
      for (const auto& r : b.lines) recorded += r.recorded;
    }
    EXPECT_GE(recorded, 12u);  // the statements but those that became text
  }
  recoverFrom(GetParam(), "/", base);
  std::string log;
  for (const std::string& f : dir.files()) {
    if (f.find("cs.") != std::string::npos && f.find(".log") != std::string::npos) {
      log += muon::test::readFile(f);
    }
  }
  const std::string expected = muon::test::readFile(expectedFile);
  const size_t header = log.find("Recovered ");
  ASSERT_NE(header, std::string::npos) << log.substr(0, 300);
  const std::string recovered = log.substr(log.find('\n', header) + 1);
  EXPECT_EQ(recovered, expected);
}

INSTANTIATE_TEST_SUITE_P(By, RecordedLines,
                         ::testing::Values(Recoverer::kProgram, Recoverer::kTool), recovererName);

class RelativeBasename : public ::testing::TestWithParam<Recoverer> {};

// The program ran in its log directory as "cs"; it is started again from
// elsewhere (or muon-recover is), and finds the file it was writing.
TEST_P(RelativeBasename, KilledInTheMiddleOfAWriteIsRecoveredOnceFromAnotherDirectory) {
  TempDir dir;
  const long kLines = 100000;
  ASSERT_NO_FATAL_FAILURE(killBackendAfter(3000000, dir.path(), "cs", kLines));
  ASSERT_EQ(spoolsIn(dir), 1u);
  recoverFrom(GetParam(), "/", fromRoot(dir.file("cs")));
  EXPECT_EQ(spoolsIn(dir), 0u);
  EXPECT_EQ(expectEachLineOnce(dir, kLines).recoveredHeaders, 1);
}

TEST_P(RelativeBasename, RecoveryKilledHalfWayAndRunAgainFromAnotherDirectoryWritesEachLineOnce) {
  TempDir dir;
  const long kLines = 150000;
  leaveDeadSpool(dir.file("cs"), kLines);
  // The first recovery works in the log directory and dies in the middle
  // of its second buffer; the second works in "/".
  ASSERT_NO_FATAL_FAILURE(killRecoveryAfter(4194304 + 200, dir.path(), "cs"));
  ASSERT_EQ(spoolsIn(dir), 1u);
  recoverFrom(GetParam(), "/", fromRoot(dir.file("cs")));
  EXPECT_EQ(spoolsIn(dir), 0u);
  expectEachLineOnce(dir, kLines);
}

// The basename is taken against the working directory at construction: a
// program that moves later still writes, and records, the files beside its spool.
TEST(CrashSafe, AProgramThatChangesDirectoryAfterStartingIsRecoveredOnce) {
  TempDir dir;
  const long kLines = 100000;
  ASSERT_NO_FATAL_FAILURE(killBackendAfter(3000000, dir.path(), "cs", kLines, "/"));
  recoverInChild(dir.file("cs"));
  EXPECT_EQ(spoolsIn(dir), 0u);
  EXPECT_EQ(expectEachLineOnce(dir, kLines).recoveredHeaders, 1);
}

INSTANTIATE_TEST_SUITE_P(By, RelativeBasename,
                         ::testing::Values(Recoverer::kProgram, Recoverer::kTool), recovererName);

// ---- kDrop: a drop is reported even when the process dies right after it ----

struct DropShared {
  std::atomic<long> appended;
  std::atomic<uint64_t> messagesDropped;
};

// A crash-safe child under kDrop logs numbered lines with no backend until
// buffers are dropped (muduo's rule: all queued but two), records the counts
// in `shared`, then dies: at once (budget < 0), or in the first write of
// the backend it then starts, after `budget` bytes (that write is the
// "Dropped" report followed by the buffers kept).
void dropThenDie(const std::string& base, DropShared* shared, long budget) {
  int status = runChild([&] {
    AsyncLogging log(base, kNoRoll, crashSafe(AsyncLogging::kDrop));
    if (!log.stats().crashSafe) ::_exit(3);
    long n = 0;
    while (log.stats().buffersDropped == 0) {
      std::string line = muon::test::numberedLine("drop", static_cast<int>(++n));
      log.append(line.data(), line.size());
    }
    shared->appended = n;
    shared->messagesDropped = log.stats().messagesDropped;
    if (budget >= 0) {
      g_writeBudget = budget;
      log.setWriteFunction(&writeThenDie);
      log.start();
      log.flush();
    }
    ::raise(SIGKILL);
  });
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

// The log files hold every line that was not dropped exactly once, and
// "Dropped log messages" reports whose counts add up to the lines dropped.
void expectDropsReportedOnce(const TempDir& dir, const DropShared& shared) {
  std::vector<bool> seen(static_cast<size_t>(shared.appended.load()) + 1, false);
  long lines = 0, reports = 0;
  uint64_t reported = 0;
  for (const std::string& f : dir.files()) {
    if (f.find(".log") == std::string::npos) continue;
    for (const std::string& line : muon::test::readLines(f)) {
      if (line.compare(0, 20, "Dropped log messages") == 0) {
        // The backend's and a recovery's reports have one form.
        uint64_t messages = 0;
        ASSERT_TRUE(muon::test::isDropReport(line, &messages)) << line;
        reported += messages;
        ++reports;
      } else if (line.compare(0, 5, "drop ") == 0) {
        size_t n = std::strtoul(line.c_str() + 5, nullptr, 10);
        ASSERT_LT(n, seen.size()) << line;
        EXPECT_FALSE(seen[n]) << "twice: " << line;
        seen[n] = true;
        ++lines;
      } else if (line.compare(0, 10, "Recovered ") != 0) {
        ADD_FAILURE() << "unexpected line in " << f << ": " << line.substr(0, 100);
      }
    }
  }
  EXPECT_GT(shared.messagesDropped.load(), 0u);
  EXPECT_EQ(reported, shared.messagesDropped.load()) << reports << " reports";
  EXPECT_EQ(lines, shared.appended.load() - static_cast<long>(shared.messagesDropped.load()));
  EXPECT_EQ(spoolsIn(dir), 0u);
}

DropShared* sharedDrops() {
  void* page = ::mmap(nullptr, sizeof(DropShared), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return page == MAP_FAILED ? nullptr : new (page) DropShared();
}

class DropReport : public ::testing::TestWithParam<Recoverer> {};

TEST_P(DropReport, OfAProcessKilledRightAfterDroppingIsWrittenByRecovery) {
  TempDir dir;
  DropShared* shared = sharedDrops();
  ASSERT_NE(shared, nullptr);
  ASSERT_NO_FATAL_FAILURE(dropThenDie(dir.file("cs"), shared, -1));
  recoverFrom(GetParam(), "/", fromRoot(dir.file("cs")));
  expectDropsReportedOnce(dir, *shared);
  ::munmap(shared, sizeof(DropShared));
}

INSTANTIATE_TEST_SUITE_P(By, DropReport,
                         ::testing::Values(Recoverer::kProgram, Recoverer::kTool), recovererName);

// The live process's own report, killed before, inside and after its write:
// the report lands exactly once, never twice, never not at all.
class DropReportKilled : public ::testing::TestWithParam<long> {};

TEST_P(DropReportKilled, AtAnyByteOfTheReportIsReportedExactlyOnce) {
  TempDir dir;
  DropShared* shared = sharedDrops();
  ASSERT_NE(shared, nullptr);
  ASSERT_NO_FATAL_FAILURE(dropThenDie(dir.file("cs"), shared, GetParam()));
  recoverInChild(dir.file("cs"));
  expectDropsReportedOnce(dir, *shared);
  ::munmap(shared, sizeof(DropShared));
}

// 0: before the report; 20: inside it; 2000: inside the first buffer after
// it; 1 GiB: everything written, then the kill.
INSTANTIATE_TEST_SUITE_P(Bytes, DropReportKilled,
                         ::testing::Values(0L, 20L, 2000L, 1L << 30));

// ---- what recovery must not do, and what it must keep ----------------------

TEST(CrashSafe, ALiveProcesssSpoolIsLeftAlone) {
  TempDir dir;
  const std::string base = dir.file("cs");
  long ownLines = 0;
  {
    AsyncLogging live(base, kNoRoll, crashSafe());
    ASSERT_TRUE(live.stats().crashSafe);
    const std::string spool = live.spoolPath();
    auto attached = Logger::attach(live);
    for (long seq = 1; seq <= 1000; ++seq) {
      LOG_INFO << "cs k=0 t=0 seq=" << seq << ' ' << kPayload;
    }
    ownLines = 1000;
    // Another process of the same program starts while this one runs.
    int status = runChild([&] {
      uint64_t recovered = 0;
      {
        AsyncLogging other(base, kNoRoll, crashSafe());
        recovered = other.stats().linesRecovered;
      }
      ::_exit(recovered == 0 ? 0 : 7);
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "recovered a live spool";
    EXPECT_EQ(::access(spool.c_str(), F_OK), 0) << "the live spool is still there";
  }
  EXPECT_EQ(spoolsIn(dir), 0u) << "a clean stop removes its spool";
  Census c = census(logFilesInOrder(dir, "cs", {}));
  for (const std::string& p : c.problems) ADD_FAILURE() << p;
  EXPECT_EQ(c.lines, ownLines);
  EXPECT_EQ(c.recoveredHeaders, 0);
}

TEST(CrashSafe, BinaryBytesInAMessageAreRecoveredAsTheyWere) {
  TempDir dir;
  const std::string base = dir.file("cs");
  std::string binary;
  for (int i = 0; i < 256; ++i) binary += static_cast<char>(i);
  binary += std::string("\0\n\0\n", 4);
  int status = runChild([&] {
    AsyncLogging log(base, kNoRoll, crashSafe());
    for (int i = 0; i < 3; ++i) log.append(binary.data(), binary.size());
    ::_exit(0);
  });
  ASSERT_TRUE(WIFEXITED(status));
  recoverInChild(base);
  std::string all;
  for (const std::string& f : dir.files()) all += muon::test::readFile(f);
  size_t found = 0;
  for (size_t pos = all.find(binary); pos != std::string::npos; pos = all.find(binary, pos + 1)) {
    ++found;
  }
  EXPECT_EQ(found, 3u);
  EXPECT_NE(all.find("Recovered 3 lines of pid"), std::string::npos) << all.substr(0, 200);
}

TEST(CrashSafe, DropPolicyKeepsItsCountsInASpool) {
  TempDir dir;
  const std::string line = std::string(999, 'y') + "\n";
  long appended = 0;
  AsyncLogging::Stats stats;
  {
    AsyncLogging log(dir.file("cs"), kNoRoll, crashSafe(AsyncLogging::kDrop));
    ASSERT_TRUE(log.stats().crashSafe);
    // No backend: past the bound all queued buffers but two are dropped.
    while (log.stats().buffersDropped == 0) {
      log.append(line.data(), line.size());
      ++appended;
    }
    stats = log.stats();
  }  // the destructor writes the rest
  // Each dropped buffer held as many whole lines as fit beside their index.
  const uint64_t perBuffer = AsyncLogging::kBufferSize / (line.size() + 16);
  EXPECT_EQ(stats.buffersDropped, AsyncLogging::kMaxPendingBuffers + 1 - 2);
  EXPECT_EQ(stats.messagesDropped, stats.buffersDropped * perBuffer);
  long inFile = 0;
  for (const std::string& f : dir.files()) {
    for (const std::string& l : muon::test::readLines(f)) inFile += l == line.substr(0, 999);
  }
  EXPECT_EQ(inFile, appended - static_cast<long>(stats.messagesDropped));
  EXPECT_EQ(spoolsIn(dir), 0u);
}

TEST(CrashSafe, ASpoolThatCannotBeCreatedIsReportedAndLoggingGoesOn) {
  TempDir dir;
  const std::string base = dir.file("cs");
  int status = runChild([&] {
    // A directory where the spool would be created: open(O_CREAT | O_EXCL)
    // fails as it would on a full or read-only disk.
    std::string blocker = base + "." + std::to_string(::getpid()) + ".spool.new";
    if (::mkdir(blocker.c_str(), 0700) != 0) ::_exit(6);
    if (!::freopen(dir.file("stderr.txt").c_str(), "w", stderr)) ::_exit(7);
    AsyncLogging log(base, kNoRoll, crashSafe());
    if (log.stats().crashSafe || !log.spoolPath().empty()) ::_exit(8);
    auto attached = Logger::attach(log);
    log.start();
    for (long seq = 1; seq <= 100; ++seq) LOG_INFO << "cs k=0 t=0 seq=" << seq << ' ' << kPayload;
    log.stop();
    std::fflush(stderr);
    ::_exit(0);
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (const std::string& f : dir.files()) ::rmdir(f.c_str());  // the blocker: TempDir removes files only
  std::string err = muon::test::readFile(dir.file("stderr.txt"));
  EXPECT_NE(err.find("cannot create spool"), std::string::npos) << err;
  EXPECT_NE(err.find("logging without crash safety"), std::string::npos) << err;
  Census c = census(logFilesInOrder(dir, "cs", {}));
  EXPECT_EQ(c.lines, 100);
}

// ---- the default mode, for comparison --------------------------------------

struct KillCase {
  const char* name;
  int flushInterval;
  long linesPerSecondPerThread;  // 0: as fast as possible
  int killAfterMs;
};

class KillNine : public ::testing::TestWithParam<KillCase> {};

constexpr int kKillThreads = 2;
struct KillShared {
  std::atomic<long> acked[kKillThreads];
};

// The bytes that may be in memory, unwritten, when the process dies: the
// current buffer, every pending one (kBlock lets the backend queue one over
// the bound), the batch being written, and LogFile's 64 KiB buffer.
constexpr size_t kUnwrittenBound =
    (AsyncLogging::kMaxPendingBuffers + 3) * AsyncLogging::kBufferSize + 64 * 1024;

TEST_P(KillNine, FileHoldsWholeLinesAndAPrefixOfEachThread) {
  const KillCase c = GetParam();
  TempDir dir;
  void* page = ::mmap(nullptr, sizeof(KillShared), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* shared = new (page) KillShared();
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid == 0) {
    AsyncLogging log(dir.file("cs"), kNoRoll, c.flushInterval, AsyncLogging::kBlock);
    auto attached = Logger::attach(log);
    log.start();
    std::vector<std::thread> threads;
    for (int t = 0; t < kKillThreads; ++t) {
      threads.emplace_back([t, shared, c] {
        auto start = std::chrono::steady_clock::now();
        for (long seq = 1;; ++seq) {
          if (c.linesPerSecondPerThread > 0) {
            // Paced: line `seq` is due at seq / rate seconds.
            auto due = start + std::chrono::microseconds(seq * 1000000 / c.linesPerSecondPerThread);
            std::this_thread::sleep_until(due);
          }
          LOG_INFO << "cs k=0 t=" << t << " seq=" << seq << ' ' << kPayload;
          shared->acked[t].store(seq, std::memory_order_release);
        }
      });
    }
    for (std::thread& th : threads) th.join();  // never: we are killed
    ::_exit(1);
  }
  ASSERT_GT(pid, 0);
  // Kill once the threads logged something and the time is up.
  auto killAt = std::chrono::steady_clock::now() + std::chrono::milliseconds(c.killAfterMs);
  while (std::chrono::steady_clock::now() < killAt || shared->acked[0].load() == 0 ||
         shared->acked[1].load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_TRUE(waitWithDeadline(pid, &status, std::chrono::seconds(10)));
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;

  std::vector<std::string> files = logFilesInOrder(dir, "cs", {});
  ASSERT_LE(files.size(), 1u);  // no file at all is fine: nothing was written yet
  Census found = census(files, true);
  for (const std::string& p : found.problems) ADD_FAILURE() << p;
  long lost = 0, acked = 0;
  for (int t = 0; t < kKillThreads; ++t) {
    long a = shared->acked[t].load();
    long inFile = found.last[{0, t}];
    EXPECT_LE(inFile, a + 1);  // a line may be in the file before its thread counted it
    acked += a;
    lost += std::max(0L, a - inFile);
  }
  // ~110-byte lines: the bound in lines is the unwritten bytes over 90.
  EXPECT_LE(static_cast<size_t>(lost) * 90, kUnwrittenBound) << "lost more than the buffers hold";
  std::printf("[ kill -9  ] %s: flushInterval=%d rate=%s killed at %d ms: logged %ld, in file %ld, "
              "lost %ld lines (%.1f%%)\n",
              c.name, c.flushInterval,
              c.linesPerSecondPerThread > 0
                  ? (std::to_string(c.linesPerSecondPerThread * kKillThreads) + "/s").c_str()
                  : "max",
              c.killAfterMs, acked, acked - lost, lost,
              acked > 0 ? 100.0 * static_cast<double>(lost) / static_cast<double>(acked) : 0.0);
  ::munmap(page, sizeof(KillShared));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, KillNine,
    ::testing::Values(KillCase{"FastDefault", 3, 0, 500}, KillCase{"FastInterval1", 1, 0, 500},
                      KillCase{"PacedDefault", 3, 5000, 500},
                      KillCase{"PacedDefaultAfterFirstTick", 3, 5000, 3500},
                      KillCase{"PacedInterval1", 1, 5000, 1500}),
    [](const ::testing::TestParamInfo<KillCase>& p) { return std::string(p.param.name); });

}  // namespace
