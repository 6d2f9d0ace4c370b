// Crashes in a forked child: the exit status must be the signal, stderr must
// hold one report, and the log file every line logged before the crash.
#include "muon/base/FailureSignalHandler.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "ChildProcess.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"

using muon::AsyncLogging;
using muon::Logger;
using muon::test::ChildResult;
using muon::test::readFile;
using muon::test::readLines;
using muon::test::runInChild;
using muon::test::TempDir;

namespace {

// Not under TSan: it intercepts sigaction and defers signal delivery, and the
// handler's flush is deliberately not async-signal-safe; the contract is for
// release and ASan builds (docs/reliability.md).
#if defined(__SANITIZE_THREAD__)
constexpr bool kUnderTsan = true;
#else
constexpr bool kUnderTsan = false;
#endif

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

void expectDiedOf(const ChildResult& r, int sig) {
  ASSERT_TRUE(r.exited) << "child hung; stderr:\n" << r.stderrText;
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status << "; stderr:\n" << r.stderrText;
  EXPECT_EQ(WTERMSIG(r.status), sig) << r.stderrText;
}

// A store to a page mapped with no access: a real SIGSEGV. (A null store is
// undefined behaviour: GCC may drop it or make it a trap, and UBSan ends the
// process itself before the fault.)
void faultingWrite() {
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) std::abort();
  *static_cast<volatile int*>(page) = 1;
}

// Shared with the parent: what each thread had logged when the crash came.
constexpr int kThreads = 4;
struct Shared {
  std::atomic<long> logged[kThreads];
  long atCrash[kThreads];
};

TEST(FailureSignalHandler, CrashFlushesEveryLineFromFourThreads) {
  if (kUnderTsan) GTEST_SKIP() << "signal handler tests do not run under TSan";
  TempDir dir;
  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  Shared* shared = new (page) Shared();
  const long kBeforeCrash = 20000;  // each thread's lines before the crash point

  ChildResult r = runInChild(dir, [&] {
    // flushInterval 3 and a roll size far above what we log: without the
    // handler's flush, most of these lines would still be in memory.
    AsyncLogging log(dir.file("crash"), 1L << 30, 3, AsyncLogging::kBlock);
    auto attached = Logger::attach(log);
    log.start();
    muon::installFailureSignalHandler();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, shared, kBeforeCrash] {
        for (long seq = 1;; ++seq) {
          LOG_INFO << "thread=" << t << " seq=" << seq;
          shared->logged[t].store(seq, std::memory_order_release);
          if (t == 0 && seq == kBeforeCrash) {
            // The crash point: wait until the others are past it too, then
            // record what everyone has logged. They keep logging while we
            // crash, as a real server's threads would.
            for (int o = 1; o < kThreads; ++o) {
              while (shared->logged[o].load(std::memory_order_acquire) < kBeforeCrash) {
                std::this_thread::yield();
              }
            }
            for (int o = 0; o < kThreads; ++o) shared->atCrash[o] = shared->logged[o].load();
            faultingWrite();
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
  });

  expectDiedOf(r, SIGSEGV);
  EXPECT_EQ(count(r.stderrText, "*** muon: SIGSEGV"), 1u) << r.stderrText;
  EXPECT_EQ(count(r.stderrText, "end of report"), 1u) << r.stderrText;
  EXPECT_NE(r.stderrText.find("backtrace"), std::string::npos) << r.stderrText;

  // Every line up to each thread's count at the crash is in the file, in
  // order, once; lines after it may or may not be.
  std::map<int, long> next;
  for (int t = 0; t < kThreads; ++t) next[t] = 1;
  size_t files = 0;
  for (const std::string& f : dir.files()) {
    if (f.find("/crash.") == std::string::npos) continue;
    ++files;
    bool unterminated = false;
    std::vector<std::string> lines = readLines(f, &unterminated);
    // The others keep logging after the flush, and the backend keeps
    // writing until the re-raised signal ends the process, possibly in the
    // middle of a write(2): the last line may be cut. It comes after every
    // line the flush wrote, so it is not one that must be there whole.
    if (unterminated) lines.pop_back();
    for (const std::string& line : lines) {
      int t = -1;
      long seq = 0;
      size_t at = line.find("thread=");
      ASSERT_NE(at, std::string::npos) << line;
      ASSERT_EQ(std::sscanf(line.c_str() + at, "thread=%d seq=%ld", &t, &seq), 2) << line;
      ASSERT_TRUE(t >= 0 && t < kThreads) << line;
      ASSERT_EQ(seq, next[t]) << "thread " << t << " out of order: " << line;
      ++next[t];
    }
  }
  EXPECT_EQ(files, 1u);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_GE(shared->atCrash[t], kBeforeCrash);
    EXPECT_GT(next[t], shared->atCrash[t]) << "thread " << t << " lost lines logged before the crash";
  }
  ::munmap(page, sizeof(Shared));
}

// The first crashing thread reports; a second one, crashing while the first
// is still flushing, parks. One report, and the status is the first signal.
std::atomic<bool> g_inFlush{false};
std::atomic<bool> g_secondCrashing{false};
void slowFlush() {
  g_inFlush.store(true);
  while (!g_secondCrashing.load()) std::this_thread::yield();
  // The second thread is at its raise(); give it time to enter the handler.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

TEST(FailureSignalHandler, TwoThreadsCrashingAtOnceReportOnce) {
  if (kUnderTsan) GTEST_SKIP() << "signal handler tests do not run under TSan";
  TempDir dir;
  ChildResult r = runInChild(dir, [] {
    Logger::setFlush(&slowFlush);
    muon::installFailureSignalHandler();
    std::thread first([] { faultingWrite(); });
    std::thread second([] {
      // Crash only once the first is inside the flush.
      while (!g_inFlush.load()) std::this_thread::yield();
      g_secondCrashing.store(true);
      ::raise(SIGBUS);
    });
    first.join();
    second.join();
  });
  expectDiedOf(r, SIGSEGV);
  EXPECT_EQ(count(r.stderrText, "*** muon: SIG"), 1u) << r.stderrText;
  EXPECT_EQ(count(r.stderrText, "end of report"), 1u) << r.stderrText;
  EXPECT_EQ(count(r.stderrText, "SIGBUS"), 0u) << r.stderrText;
}

// A flush that never returns (a crash while the logger's lock is held, or in
// its backend thread) is cut by the watchdog. The crashing thread blocks
// SIGALRM, as a thread waiting on signals would, so the alarm has to be
// passed on to it.
void hangingFlush() {
  for (;;) ::pause();
}

TEST(FailureSignalHandler, HungFlushIsCutByWatchdog) {
  if (kUnderTsan) GTEST_SKIP() << "signal handler tests do not run under TSan";
  TempDir dir;
  auto start = std::chrono::steady_clock::now();
  ChildResult r = runInChild(dir, [] {
    Logger::setFlush(&hangingFlush);
    muon::FailureSignalOptions options;
    options.flushTimeoutSeconds = 1;
    muon::installFailureSignalHandler(options);
    std::thread crasher([] {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGALRM);
      pthread_sigmask(SIG_BLOCK, &set, nullptr);
      std::abort();
    });
    crasher.join();
  });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  expectDiedOf(r, SIGABRT);
  EXPECT_NE(r.stderrText.find("did not finish in time"), std::string::npos) << r.stderrText;
  EXPECT_EQ(count(r.stderrText, "end of report"), 1u) << r.stderrText;
  EXPECT_GE(seconds, 0.9);  // it did wait for the flush first
}

// A fault inside the flush itself is reported, and the process still dies of
// the first signal.
void crashingFlush() { faultingWrite(); }

TEST(FailureSignalHandler, CrashInsideFlushStillReports) {
  if (kUnderTsan) GTEST_SKIP() << "signal handler tests do not run under TSan";
  TempDir dir;
  ChildResult r = runInChild(dir, [] {
    Logger::setFlush(&crashingFlush);
    muon::installFailureSignalHandler();
    ::raise(SIGFPE);
  });
  expectDiedOf(r, SIGFPE);
  EXPECT_NE(r.stderrText.find("SIGSEGV (segmentation fault) inside the failure handler"),
            std::string::npos)
      << r.stderrText;
  EXPECT_EQ(count(r.stderrText, "end of report"), 1u) << r.stderrText;
}

// Infinite recursion: the fault comes with no stack left, so only the
// alternate stack lets the handler run at all.
// The compiler must not see that the recursion never ends (it warns, and
// could drop it): the limit is read at run time and never reached.
volatile int g_recursionLimit = 1 << 30;
int recurse(int depth) {
  if (depth > g_recursionLimit) return 0;
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  return recurse(depth + 1) + frame[0];  // not a tail call
}

TEST(FailureSignalHandler, StackOverflowIsReported) {
  if (kUnderTsan) GTEST_SKIP() << "signal handler tests do not run under TSan";
  TempDir dir;
  ChildResult r = runInChild(dir, [] {
    muon::installFailureSignalHandler();
    std::thread([] {
      muon::installFailureSignalStack();
      std::printf("%d\n", recurse(0));
    }).join();
  });
  expectDiedOf(r, SIGSEGV);
  EXPECT_EQ(count(r.stderrText, "*** muon: SIGSEGV"), 1u) << r.stderrText;
  EXPECT_EQ(count(r.stderrText, "end of report"), 1u) << r.stderrText;
}

// LOG_FATAL flushes and aborts; the handler then reports the SIGABRT with the
// FATAL line already written (the second flush finds nothing new).
TEST(FailureSignalHandler, LogFatalEndsInOneReport) {
  if (kUnderTsan) GTEST_SKIP() << "signal handler tests do not run under TSan";
  TempDir dir;
  std::string logPath = dir.file("fatal.log");
  ChildResult r = runInChild(dir, [&] {
    if (std::freopen(logPath.c_str(), "w", stdout) == nullptr) ::_exit(101);
    muon::installFailureSignalHandler();
    LOG_FATAL << "the end";
  });
  expectDiedOf(r, SIGABRT);
  EXPECT_NE(readFile(logPath).find("FATAL the end"), std::string::npos);
  EXPECT_EQ(count(r.stderrText, "*** muon: SIGABRT"), 1u) << r.stderrText;
}

// Each signal the handler catches, made the way a program gets it where
// that needs no undefined behaviour (which the sanitizers would catch
// first): SIGILL from ud2, SIGBUS from a store past the end of a mapped
// file, SIGSEGV from a PROT_NONE page; SIGFPE and SIGABRT raised.
struct CrashCase {
  int sig;
  const char* header;  // how the report names it
  void (*crash)();
};

void illegalInstruction() { __builtin_trap(); }

void busError() {
  int fd = ::memfd_create("muon-sigbus", 0);  // an empty file
  if (fd < 0) std::abort();
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED) std::abort();
  *static_cast<volatile int*>(page) = 1;  // no file behind the page
}

void raiseFpe() { ::raise(SIGFPE); }
void callAbort() { std::abort(); }

class CrashReport : public ::testing::TestWithParam<CrashCase> {};

TEST_P(CrashReport, NamesSignalThreadAndPidThenDiesOfTheSignal) {
  if (kUnderTsan) GTEST_SKIP() << "signal handler tests do not run under TSan";
  const CrashCase c = GetParam();
  TempDir dir;
  ChildResult r = runInChild(dir, [&c] {
    ::prctl(PR_SET_NAME, "crasher", 0, 0, 0);
    muon::installFailureSignalHandler();
    c.crash();
  });
  expectDiedOf(r, c.sig);
  EXPECT_EQ(count(r.stderrText, std::string("*** muon: ") + c.header), 1u)
      << r.stderrText;
  EXPECT_EQ(count(r.stderrText, "end of report"), 1u) << r.stderrText;
  EXPECT_NE(r.stderrText.find("*** muon: backtrace"), std::string::npos) << r.stderrText;
  // The child's main thread crashed: its thread id is the child's pid.
  const std::string before = " in thread ";
  const std::string middle = " (crasher) of pid ";
  size_t at = r.stderrText.find(before);
  ASSERT_NE(at, std::string::npos) << r.stderrText;
  char* end = nullptr;
  long tid = std::strtol(r.stderrText.c_str() + at + before.size(), &end, 10);
  ASSERT_EQ(std::string(end, middle.size()), middle) << r.stderrText;
  long pid = std::strtol(end + middle.size(), nullptr, 10);
  EXPECT_GT(tid, 0);
  EXPECT_EQ(tid, pid);
}

INSTANTIATE_TEST_SUITE_P(
    Signals, CrashReport,
    ::testing::Values(CrashCase{SIGSEGV, "SIGSEGV (segmentation fault)", &faultingWrite},
                      CrashCase{SIGBUS, "SIGBUS (bus error)", &busError},
                      CrashCase{SIGFPE, "SIGFPE (arithmetic exception)", &raiseFpe},
                      CrashCase{SIGILL, "SIGILL (illegal instruction)", &illegalInstruction},
                      CrashCase{SIGABRT, "SIGABRT (aborted)", &callAbort}),
    [](const ::testing::TestParamInfo<CrashCase>& param) {
      const std::string header = param.param.header;
      return header.substr(0, header.find(' '));  // "SIGBUS"
    });

}  // namespace
