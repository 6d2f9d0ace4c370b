// FailureSignalHandler: on a crash, write out the buffered log, report, die.
//
//   int main() {
//     muon::AsyncLogging log("server", 500 << 20);
//     ... Logger::setOutput / Logger::setFlush route lines to `log` ...
//     log.start();
//     muon::installFailureSignalHandler();
//
// Opt-in. On SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT the first thread that
// crashes
//   1. calls Logger::flush() (with AsyncLogging behind setFlush, this waits
//      until the backend has written every line appended before the crash);
//   2. writes a report to stderr with async-signal-safe calls only: the
//      signal's name and code, the faulting address, pid and thread id, and a
//      backtrace (backtrace_symbols_fd);
//   3. restores the default action and raises the signal again, so the exit
//      status (and a core dump, if enabled) is the signal's.
// Step 1 is not async-signal-safe: it takes the logger's locks and waits for
// its backend. Two guards bound the damage: only the first crashing thread
// runs it (any other thread that crashes meanwhile parks until the process
// dies, so there is one report), and a watchdog (alarm(2), SIGALRM redirected
// to the crashing thread) skips to steps 2 and 3 if the flush has not
// returned within flushTimeoutSeconds: a crash while holding the logger's
// lock, or in its backend thread, ends in a report, not a hang. A crash
// inside the handler itself skips to step 3.
//
// The handler runs on an alternate signal stack where one is set, so a stack
// overflow can be reported. sigaltstack is per thread: install sets one for
// the calling thread; call installFailureSignalStack() at the start of any
// other thread whose stack overflow should be reported (others die with the
// default action, silently, as without the handler).
//
// Call install from the main thread at start-up, after the logger is set up,
// before threads that may crash are running. It replaces the process's
// handlers for these signals (including a sanitizer's) and, during a crash
// only, SIGALRM's.
#pragma once

namespace muon {

struct FailureSignalOptions {
  // How long the flush may take before the watchdog reports without it.
  // Long enough for a backend to write 25 queued 4 MiB buffers to a slow
  // disk; short enough that a supervisor restarting the process does not
  // think it hung.
  unsigned flushTimeoutSeconds = 5;
  // Whether to call Logger::flush() at all (false: report and die at once).
  bool flushLog = true;
};

// Installs the handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, an
// alternate signal stack for the calling thread, and loads the unwinder that
// backtrace() needs (so the handler does not dlopen it mid-crash). A second
// call only updates the options.
void installFailureSignalHandler(const FailureSignalOptions& options = FailureSignalOptions());

// Gives the calling thread an alternate signal stack (mapped, never freed: a
// thread's stack must outlive any signal delivered to it). Returns false if
// it could not be set (the handler then runs on the thread's own stack).
// Safe to call more than once per thread.
bool installFailureSignalStack();

}  // namespace muon
