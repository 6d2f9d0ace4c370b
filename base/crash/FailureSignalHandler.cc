#include "muon/base/FailureSignalHandler.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "muon/base/internal/FileIo.h"
#include "muon/base/Logging.h"

namespace muon {

namespace {

constexpr int kFailureSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Big enough for the flush (a mutex and a condition variable wait, or a
// user's flush function) and backtrace() even with sanitizer-sized frames.
constexpr size_t kAltStackSize = 256 * 1024;

std::atomic<bool> g_installed{false};
std::atomic<unsigned> g_flushTimeoutSeconds{5};
std::atomic<bool> g_flushLog{true};

// The thread that is reporting (0: none yet). The first crashing thread wins
// it with a compare-exchange; every later crash sees it taken.
std::atomic<int> g_reportingTid{0};
// What the reporting thread caught, for the watchdog's report.
std::atomic<int> g_crashSignal{0};
std::atomic<int> g_crashCode{0};
std::atomic<uintptr_t> g_crashAddress{0};
// Set by whichever of the handler and the watchdog reports first.
std::atomic<bool> g_reported{false};

thread_local bool t_hasAltStack = false;

int gettid() { return static_cast<int>(::syscall(SYS_gettid)); }

// A line built without malloc or stdio: both may be what crashed.
class SafeWriter {
 public:
  SafeWriter& str(const char* s) {
    while (*s != '\0' && len_ < sizeof buf_) buf_[len_++] = *s++;
    return *this;
  }
  SafeWriter& dec(long long v) {
    unsigned long long u = v < 0 ? 0ULL - static_cast<unsigned long long>(v)
                                 : static_cast<unsigned long long>(v);
    if (v < 0) str("-");
    char tmp[24];
    size_t n = 0;
    do {
      tmp[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    while (n > 0 && len_ < sizeof buf_) buf_[len_++] = tmp[--n];
    return *this;
  }
  SafeWriter& hex(uintptr_t v) {
    str("0x");
    char tmp[2 * sizeof v];
    size_t n = 0;
    do {
      tmp[n++] = "0123456789abcdef"[v & 0xf];
      v >>= 4;
    } while (v != 0);
    while (n > 0 && len_ < sizeof buf_) buf_[len_++] = tmp[--n];
    return *this;
  }
  // A failing stderr is not worth more than trying.
  void flushTo(int fd) {
    writeToFd(fd, buf_, len_);
    len_ = 0;
  }

 private:
  char buf_[512];
  size_t len_ = 0;
};

const char* signalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (aborted)";
    case SIGALRM: return "SIGALRM";
    default: return "signal";
  }
}

// Sets `sig`'s action: `handler` (an SA_SIGINFO handler) with `flags`, or
// the default action when `handler` is null. Async-signal-safe.
void setAction(int sig, void (*handler)(int, siginfo_t*, void*), int flags) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  if (handler) {
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | flags;
  } else {
    sa.sa_handler = SIG_DFL;
  }
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
}

// Lets `sig` reach the calling thread even if it had it blocked.
// Async-signal-safe.
void unblockInThisThread(int sig) {
  sigset_t set;
  ::sigemptyset(&set);
  ::sigaddset(&set, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

// Restores the default action and raises `sig` again, so the process ends
// the way it would have without us: same exit status, same core dump.
[[noreturn]] void dieWith(int sig) {
  setAction(sig, nullptr, 0);
  unblockInThisThread(sig);
  ::raise(sig);
  // Only if something blocks the default action from ending us.
  ::_exit(128 + sig);
}

void writeReport(const char* note) {
  if (g_reported.exchange(true)) return;
  int sig = g_crashSignal.load();
  char name[17] = {};
  ::prctl(PR_GET_NAME, name, 0, 0, 0);  // a system call: safe here
  SafeWriter w;
  w.str("*** muon: ").str(signalName(sig)).str(" code=").dec(g_crashCode.load());
  if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) {
    w.str(" addr=").hex(g_crashAddress.load());
  }
  w.str(" in thread ").dec(gettid()).str(" (").str(name).str(") of pid ").dec(::getpid());
  w.str(" ***\n");
  if (note != nullptr) w.str("*** muon: ").str(note).str(" ***\n");
  w.str("*** muon: backtrace (most recent call first):\n");
  w.flushTo(STDERR_FILENO);
  void* frames[64];
  int n = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
  w.str("*** muon: end of report; raising ").str(signalName(sig)).str(" again ***\n");
  w.flushTo(STDERR_FILENO);
}

// SIGALRM during a crash: the watchdog. alarm(2) signals the process, so any
// thread may get it; only the reporting thread can report its own stack, so
// the others pass it on.
void onAlarm(int, siginfo_t*, void*) {
  int saved = errno;
  int reporter = g_reportingTid.load();
  if (reporter != 0 && reporter != gettid()) {
    ::syscall(SYS_tgkill, ::getpid(), reporter, SIGALRM);
    errno = saved;
    return;
  }
  if (reporter == 0) {  // cannot happen: the alarm is set after the tid
    errno = saved;
    return;
  }
  writeReport("the log flush did not finish in time; reporting without it");
  dieWith(g_crashSignal.load());
}

void armWatchdog(unsigned seconds) {
  setAction(SIGALRM, &onAlarm, SA_ONSTACK | SA_RESTART);
  // The crashing thread may have SIGALRM blocked (a thread that waits on
  // signals with sigwait usually does): the watchdog must reach it anyway.
  unblockInThisThread(SIGALRM);
  ::alarm(seconds);
}

void onFailure(int sig, siginfo_t* info, void*) {
  int self = gettid();
  int expected = 0;
  if (!g_reportingTid.compare_exchange_strong(expected, self)) {
    if (expected == self) {
      // A fault inside our own handler (in the flush, most likely): report
      // what we can without the log and end.
      SafeWriter w;
      w.str("*** muon: ").str(signalName(sig)).str(" inside the failure handler ***\n");
      w.flushTo(STDERR_FILENO);
      writeReport("crashed while flushing the log");
      dieWith(g_crashSignal.load() != 0 ? g_crashSignal.load() : sig);
    }
    // Another thread is reporting and will end the process: wait for it.
    // Returning would re-run the faulting instruction; dying here would cut
    // the report (and the flush) short.
    for (;;) ::pause();
  }
  g_crashSignal.store(sig);
  g_crashCode.store(info != nullptr ? info->si_code : 0);
  g_crashAddress.store(info != nullptr ? reinterpret_cast<uintptr_t>(info->si_addr) : 0);
  if (g_flushLog.load()) {
    armWatchdog(g_flushTimeoutSeconds.load());
    Logger::flush();
    ::alarm(0);
  }
  writeReport(nullptr);
  dieWith(sig);
}

}  // namespace

bool installFailureSignalStack() {
  if (t_hasAltStack) return true;
  stack_t old;
  if (::sigaltstack(nullptr, &old) == 0 && (old.ss_flags & SS_DISABLE) == 0 &&
      old.ss_size >= kAltStackSize) {
    t_hasAltStack = true;  // someone (a sanitizer, the program) set a big enough one
    return true;
  }
  // One guard page below the stack: overflowing it faults instead of
  // silently writing over whatever is mapped next.
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* p = ::mmap(nullptr, kAltStackSize + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  ::mprotect(p, page, PROT_NONE);
  stack_t ss;
  std::memset(&ss, 0, sizeof ss);
  ss.ss_sp = static_cast<char*>(p) + page;
  ss.ss_size = kAltStackSize;
  ss.ss_flags = 0;
  if (::sigaltstack(&ss, nullptr) != 0) {
    ::munmap(p, kAltStackSize + page);
    return false;
  }
  t_hasAltStack = true;
  return true;
}

void installFailureSignalHandler(const FailureSignalOptions& options) {
  g_flushTimeoutSeconds.store(options.flushTimeoutSeconds > 0 ? options.flushTimeoutSeconds : 1);
  g_flushLog.store(options.flushLog);
  if (g_installed.exchange(true)) return;
  // The first backtrace() loads libgcc_s (dlopen, malloc): do it now, not
  // in a crash.
  void* frames[2];
  ::backtrace(frames, 2);
  installFailureSignalStack();
  for (int sig : kFailureSignals) {
    // SA_NODEFER: a second fault of the same kind inside the handler comes
    // back to it (and is reported as such) instead of killing us silently.
    setAction(sig, &onFailure, SA_ONSTACK | SA_NODEFER);
  }
}

}  // namespace muon
