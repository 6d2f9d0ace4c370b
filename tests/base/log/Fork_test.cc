// A process that logs through AsyncLogging, and the processes it forks or
// that are killed under it:
//  - Fork: fork() while the backend and producers run. The child has one
//    thread and no backend; it sets its own output (docs/reliability.md) and
//    must be able to log at once, with its own thread id, without touching
//    the parent's file.
// (kill -9 of a process that logs is in CrashSafe_test.cc, both modes.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <new>
#include <cctype>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ChildProcess.h"
#include "TempDir.h"
#include "TextScan.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/LogFile.h"
#include "muon/base/TscClock.h"
#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

using muon::AsyncLogging;
using muon::Logger;
using muon::LogFile;
using muon::test::readLines;
using muon::test::waitWithDeadline;
using muon::test::scanLiteral;
using muon::test::scanNumber;
using muon::test::TempDir;

namespace {

// A plain output function, not a test sink: the rule under test is that a
// forked child sets its own output with Logger::setOutput, and a sink would
// bring its lock (maybe held by a parent thread at the fork) into the child.
std::atomic<LogFile*> g_childFile{nullptr};
void childFileOutput(const char* msg, size_t len) { g_childFile.load()->append(msg, len); }
void childFileFlush() { g_childFile.load()->flush(); }

// The files in `dir` whose name starts with `prefix`.
std::vector<std::string> filesStartingWith(const TempDir& dir, const std::string& prefix) {
  std::vector<std::string> result;
  for (const std::string& f : dir.files()) {
    if (f.compare(0, dir.path().size() + 1 + prefix.size(), dir.path() + "/" + prefix) == 0) {
      result.push_back(f);
    }
  }
  return result;
}

// A log line as Logger writes it, with our "<tag> t=<thread> seq=<n> xxx"
// message:
//   20261122 01:02:03.123456Z  4321 INFO  <tag> t=<thread> seq=<n> xxx - Fork_test.cc:<line>
// Parsed by hand: the kill -9 cases read millions of lines, too many for
// std::regex.
struct Parsed {
  int tid;
  std::string tag;
  int thread;
  long seq;
};

bool digits(const std::string& s, size_t from, size_t n) {
  if (from + n > s.size()) return false;
  for (size_t i = from; i < from + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool parse(const std::string& line, Parsed* out) {
  // "YYYYmmdd HH:MM:SS.uuuuuu"
  if (!digits(line, 0, 8) || line.compare(8, 1, " ") != 0 || !digits(line, 9, 2) ||
      line.compare(11, 1, ":") != 0 || !digits(line, 12, 2) || line.compare(14, 1, ":") != 0 ||
      !digits(line, 15, 2) || line.compare(17, 1, ".") != 0 || !digits(line, 18, 6)) {
    return false;
  }
  size_t pos = 24;
  if (pos < line.size() && line[pos] == 'Z') ++pos;
  size_t spaces = pos;
  while (pos < line.size() && line[pos] == ' ') ++pos;
  long tid = 0, thread = 0, seq = 0, sourceLine = 0;
  if (pos == spaces || !scanNumber(line, &pos, &tid) || !scanLiteral(line, &pos, " INFO  ")) return false;
  size_t tagStart = pos;
  while (pos < line.size() && std::isalnum(static_cast<unsigned char>(line[pos]))) ++pos;
  if (pos == tagStart) return false;
  out->tag = line.substr(tagStart, pos - tagStart);
  if (!scanLiteral(line, &pos, " t=") || !scanNumber(line, &pos, &thread) ||
      !scanLiteral(line, &pos, " seq=") || !scanNumber(line, &pos, &seq) || !scanLiteral(line, &pos, " ")) {
    return false;
  }
  size_t xs = pos;
  while (pos < line.size() && line[pos] == 'x') ++pos;
  if (pos == xs || !scanLiteral(line, &pos, " - Fork_test.cc:") || !scanNumber(line, &pos, &sourceLine)) {
    return false;
  }
  out->tid = static_cast<int>(tid);
  out->thread = static_cast<int>(thread);
  out->seq = seq;
  return pos == line.size();
}

const std::string kPayload(40, 'x');

// Joins the producers however the test leaves their scope (an ASSERT
// returns early): a running std::thread must not be destroyed, nor what it
// writes into.
struct StopAndJoin {
  std::atomic<bool>& stop;
  std::vector<std::thread>& threads;
  void now() {
    stop = true;
    for (std::thread& t : threads) {
      if (t.joinable()) t.join();
    }
  }
  ~StopAndJoin() { now(); }
};

TEST(Fork, ChildOfRunningAsyncLoggingLogsToItsOwnOutput) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  // Its children allocate (a LogFile, freopen, a statement's first slot)
  // right after a fork taken while the producers and the backend may
  // allocate. glibc's malloc holds its locks across fork(); GCC 12's
  // sanitizers' allocators do not (LLVM added that for TSan in 2024,
  // llvm-project pull request 96600, and for ASan in December 2023, pull
  // request 75290), so a child can inherit a size class's lock held and hang
  // in its first allocation of that size (docs/reliability.md has the hangs
  // seen). The plain build runs it.
  GTEST_SKIP() << "GCC 12's sanitizers do not lock their allocators across fork()";
#endif
  TempDir dir;
  const int kProducers = 2;
  const int kForks = 20;
  const long kChildLines = 200;
  std::atomic<bool> stop{false};
  std::vector<long> logged(kProducers, 0);
  std::vector<pid_t> childPids;
  {
    AsyncLogging log(dir.file("parent"), 1L << 30, 1, AsyncLogging::kBlock);
    auto attached = Logger::attach(log);
    log.start();
    std::vector<std::atomic<long>> progress(kProducers);
    std::vector<std::thread> producers;
    StopAndJoin joinProducers{stop, producers};
    for (int t = 0; t < kProducers; ++t) {
      producers.emplace_back([&, t] {
        long seq = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          ++seq;
          LOG_INFO << "parent t=" << t << " seq=" << seq << ' ' << kPayload;
          progress[static_cast<size_t>(t)].store(seq, std::memory_order_relaxed);
        }
        logged[static_cast<size_t>(t)] = seq;
      });
    }
    int parentTid = muon::CurrentThread::tid();
    for (int k = 0; k < kForks; ++k) {
      // Fork while the producers are mid-stream: wait for them to move on.
      long before = progress[0].load() + progress[1].load();
      while (progress[0].load() + progress[1].load() < before + 1000) std::this_thread::yield();
      std::string childLog = dir.file("child" + std::to_string(k));
      std::fflush(stdout);
      pid_t pid = ::fork();
      if (pid == 0) {
        // The child's rule: replace the output before logging. Even forks
        // log through a LogFile of their own, odd ones to stdout.
        int code = 0;
        if (muon::CurrentThread::tid() != ::getpid() || muon::CurrentThread::tid() == parentTid) {
          code = 2;
        }
        LogFile* file = nullptr;
        if (k % 2 == 0) {
          file = new LogFile(childLog, 1L << 30, false);
          g_childFile = file;
          Logger::setOutput(&childFileOutput);
          Logger::setFlush(&childFileFlush);
        } else {
          if (std::freopen((childLog + ".stdout").c_str(), "w", stdout) == nullptr) ::_exit(3);
          Logger::setOutput(nullptr);
          Logger::setFlush(nullptr);
        }
        for (long seq = 1; seq <= kChildLines; ++seq) {
          LOG_INFO << "child t=" << k << " seq=" << seq << ' ' << kPayload;
        }
        Logger::flush();
        // _exit, not exit: the parent's AsyncLogging (a static, in a real
        // server) must not be destroyed here; its backend thread does not
        // exist in the child, and stop() would wait for it.
        ::_exit(code);
      }
      ASSERT_GT(pid, 0);
      childPids.push_back(pid);
      int status = 0;
      std::string stuck;
      ASSERT_TRUE(waitWithDeadline(pid, &status, std::chrono::seconds(5), &stuck))
          << "child " << k << " hung: " << stuck;
      ASSERT_TRUE(WIFEXITED(status)) << "child " << k << " status " << status;
      EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << k << " (2: wrong thread id)";
    }
    joinProducers.now();
    log.stop();
    attached.detach();
  }

  // The parent's file: whole lines, each thread's full sequence in order, no
  // line of a child.
  std::vector<std::string> parentFiles = filesStartingWith(dir, "parent.");
  ASSERT_EQ(parentFiles.size(), 1u);
  bool unterminated = false;
  std::vector<long> next(kProducers, 1);
  for (const std::string& line : readLines(parentFiles[0], &unterminated)) {
    Parsed p;
    ASSERT_TRUE(parse(line, &p)) << "not a whole line: " << line;
    ASSERT_EQ(p.tag, "parent") << line;
    ASSERT_EQ(p.seq, next[static_cast<size_t>(p.thread)]) << line;
    ++next[static_cast<size_t>(p.thread)];
  }
  EXPECT_FALSE(unterminated);
  for (int t = 0; t < kProducers; ++t) EXPECT_EQ(next[static_cast<size_t>(t)] - 1, logged[static_cast<size_t>(t)]);

  // Each child's own output: all its lines, with its own pid as thread id.
  for (int k = 0; k < kForks; ++k) {
    std::vector<std::string> files =
        filesStartingWith(dir, "child" + std::to_string(k) + (k % 2 == 0 ? "." : ".stdout"));
    ASSERT_EQ(files.size(), 1u) << "child " << k;
    long seq = 0;
    for (const std::string& line : readLines(files[0])) {
      Parsed p;
      ASSERT_TRUE(parse(line, &p)) << line;
      EXPECT_EQ(p.tag, "child");
      EXPECT_EQ(p.thread, k);
      EXPECT_EQ(p.seq, ++seq);
      // The forking thread's cached id was reset: the child's only thread
      // is its main thread, whose id is the pid.
      EXPECT_EQ(p.tid, childPids[static_cast<size_t>(k)]) << line;
    }
    EXPECT_EQ(seq, kChildLines) << "child " << k;
  }
}

// The tests below look at whether children hang, not at lines: a capture
// would only grow.
void discardOutput(const char*, size_t) {}

// Forks up to 200 children, one at a time, each running childBody(i) and
// exiting; stops at the first child that does not exit within 5 s. Returns
// how many hung (0 or 1); `stuck` says where the hung one waited.
int forksThatHang(void (*childBody)(int), std::string* stuck) {
  int hung = 0;
  for (int i = 0; i < 200 && hung == 0; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      childBody(i);
      ::_exit(0);
    }
    int status = 0;
    if (!waitWithDeadline(pid, &status, std::chrono::seconds(5), stuck)) ++hung;
  }
  return hung;
}

// Another thread keeps taking the Logger's time-zone lock (setTimeZone)
// while this one forks. A child's first line rebuilds its date-time prefix,
// which takes that lock: had it been copied locked, the child would hang.
TEST(Fork, ChildIsNotBlockedByATimeZoneChangeInAnotherThread) {
  Logger::setOutput(&discardOutput);
  std::atomic<bool> done{false};
  std::thread changer([&done] {
    while (!done.load(std::memory_order_relaxed)) Logger::setTimeZone(muon::TimeZone());
  });
  std::string stuck;
  int hung = forksThatHang([](int i) { LOG_INFO << "child " << i; }, &stuck);
  done = true;
  changer.join();
  Logger::setOutput(nullptr);
  EXPECT_EQ(hung, 0) << "a child hung on the time-zone lock it inherited: " << stuck;
}

// The same for the level registry: another thread keeps changing module
// levels (holding the registry lock) while this one forks, and the child
// sets a level, which takes that lock.
TEST(Fork, ChildIsNotBlockedByALevelChangeInAnotherThread) {
  Logger::setOutput(&discardOutput);
  std::atomic<bool> done{false};
  std::thread changer([&done] {
    while (!done.load(std::memory_order_relaxed)) Logger::setModuleLevel("Elsewhere", Logger::TRACE);
  });
  std::string stuck;
  int hung = forksThatHang(
      [](int i) {
        Logger::setLogLevel(Logger::INFO);
        LOG_INFO << "child " << i;
      },
      &stuck);
  done = true;
  changer.join();
  Logger::clearModuleLevels();
  Logger::setOutput(nullptr);
  EXPECT_EQ(hung, 0) << "a child hung on the level registry's lock it inherited: " << stuck;
}

// And for the backtrace ring: another thread keeps pushing lines below the
// level (holding the ring's lock) while this one forks; the child pushes one.
TEST(Fork, ChildIsNotBlockedByTheBacktraceRingInAnotherThread) {
  Logger::setOutput(&discardOutput);
  Logger::enableBacktrace(16);
  std::atomic<bool> done{false};
  std::thread pusher([&done] {
    while (!done.load(std::memory_order_relaxed)) LOG_DEBUG << "into the ring";
  });
  std::string stuck;
  int hung = forksThatHang([](int i) { LOG_TRACE << "child " << i; }, &stuck);
  done = true;
  pusher.join();
  Logger::enableBacktrace(0);
  Logger::setOutput(nullptr);
  EXPECT_EQ(hung, 0) << "a child hung on the backtrace ring's lock it inherited: " << stuck;
}

// And for the clock: another thread is publishing a calibration (its
// sequence odd, as readers must not use it) when this one forks. A child
// that inherited it half published would spin for good at its first
// reading of the clock; the fork waits for the calibration to end instead.
TEST(Fork, ChildIsNotBlockedByACalibrationInAnotherThread) {
  if (!muon::TscClock::counterAvailable()) {
    GTEST_SKIP() << "no invariant counter here: the clock reads clock_gettime and never calibrates";
  }
  // The counter is the clock once its first scale is measured (kWarmupMs).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!muon::TscClock::usingTsc() && std::chrono::steady_clock::now() < until) {
    muon::TscClock::now();
  }
  ASSERT_TRUE(muon::TscClock::usingTsc());
  std::atomic<bool> inside{false};
  std::thread calibrator([&inside] {
    muon::detail::whileCalibrating(
        [](void* p) {
          static_cast<std::atomic<bool>*>(p)->store(true);
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        },
        &inside);
  });
  // Nothing here reads the clock until the fork: it would wait too.
  while (!inside.load()) std::this_thread::yield();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    muon::TscClock::now();
    ::_exit(0);
  }
  int status = 0;
  std::string stuck;
  const bool exited = waitWithDeadline(pid, &status, std::chrono::seconds(5), &stuck);
  calibrator.join();
  EXPECT_TRUE(exited) << "a child hung on the calibration it inherited: " << stuck;
}

}  // namespace
