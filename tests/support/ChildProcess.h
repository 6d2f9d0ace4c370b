// Test helpers for child processes. For tests only.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace muon {
namespace test {

// Waits for `pid` until `deadline`; a child still alive then is killed and
// the wait reports false (a hung child is the failure these tests look for).
inline bool waitWithDeadline(pid_t pid, int* status, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    pid_t w = ::waitpid(pid, status, WNOHANG);
    if (w == pid) return true;
    if (w < 0) return false;
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace test
}  // namespace muon
