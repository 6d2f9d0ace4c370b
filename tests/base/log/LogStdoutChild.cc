// log_stdout_child MODE: logs with the default output (stdout, no sink), as a
// program run under systemd, docker or `| tee` does, for Logging_test's
// LoggingStdoutTest cases, which give it a pipe as stdout:
//   wait            a line, then waits for the end of stdin, then another line
//   printf-first    printf()s a line, logs one, then waits for the end of stdin
//   sigpipe-ignored ignores SIGPIPE and logs three lines into a pipe whose
//                   reader is gone; exits 0 if it is still running after them
//   sigpipe-default the same with SIGPIPE at its default
//   interrupted     installs a SIGUSR1 handler without SA_RESTART, then logs a
//                   line into a full pipe (the test signals it while the
//                   write blocks, then reads); the handler writes "!\n" to
//                   stderr; exits 0 if it ran
// A bad mode exits 2.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "muon/base/Logging.h"

namespace {

volatile sig_atomic_t g_interrupted = 0;
// Tells the test that the signal has come (and so that the write it
// interrupted has failed).
void onSigusr1(int) {
  g_interrupted = 1;
  static_cast<void>(::write(STDERR_FILENO, "!\n", 2));
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc != 2) return 2;
  const char* mode = argv[1];
  if (std::strcmp(mode, "wait") == 0) {
    LOG_INFO << "before the wait";
    char c;
    while (::read(STDIN_FILENO, &c, 1) > 0) {
    }
    LOG_INFO << "after the wait";
    return 0;
  }
  if (std::strcmp(mode, "printf-first") == 0) {
    std::printf("printed before the line\n");
    LOG_INFO << "logged after the printf";
    char c;
    while (::read(STDIN_FILENO, &c, 1) > 0) {
    }
    return 0;
  }
  if (std::strcmp(mode, "sigpipe-ignored") == 0 || std::strcmp(mode, "sigpipe-default") == 0) {
    // The test's own disposition would pass through exec: set both ways.
    ::signal(SIGPIPE, std::strcmp(mode, "sigpipe-ignored") == 0 ? SIG_IGN : SIG_DFL);
    for (int i = 0; i < 3; ++i) LOG_INFO << "nobody reads line " << i;
    return 0;
  }
  if (std::strcmp(mode, "interrupted") == 0) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = &onSigusr1;  // no SA_RESTART: a blocked write(2) fails with EINTR
    ::sigaction(SIGUSR1, &sa, nullptr);
    LOG_INFO << "written after an interruption";
    return g_interrupted ? 0 : 3;
  }
  return 2;
}
