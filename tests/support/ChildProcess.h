// Test helpers for child processes: wait with a deadline, run a function or
// a program in a child and collect how it ended and what it wrote to stderr.
// For tests only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "TempDir.h"

namespace muon {
namespace test {

// Every thread's stack in a live process, by gdb, for a failure message:
// the "Thread" and "#N" lines of `thread apply all bt`, at most 4 KiB; ""
// where gdb is not installed or may not attach (ptrace refused).
inline std::string stacksOf(pid_t pid) {
  if (::access("/usr/bin/gdb", X_OK) != 0) return "";
  const std::string command = "timeout 30 /usr/bin/gdb -nx -batch -p " + std::to_string(pid) +
                              " -ex 'thread apply all bt 25' 2>/dev/null";
  FILE* gdb = ::popen(command.c_str(), "r");
  if (gdb == nullptr) return "";
  std::string stacks;
  char line[512];
  while (std::fgets(line, sizeof line, gdb) != nullptr) {
    if (stacks.size() < 4096 && (std::strncmp(line, "Thread ", 7) == 0 || line[0] == '#')) {
      stacks += line;
    }
  }
  ::pclose(gdb);
  return stacks;
}

// Where a live process is stuck, for a failure message: its system call
// (/proc/<pid>/syscall: the number, then the arguments), the mapping the
// first argument points into (for a futex, whose lock it waits on: the
// test binary's data, a library's, or anonymous memory), and its wchan.
inline std::string describeStuckProcess(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid) + "/";
  auto firstLine = [](const std::string& path) {
    std::string text = readFile(path);
    size_t end = text.find('\n');
    return end == std::string::npos ? text : text.substr(0, end);
  };
  std::string syscall = firstLine(proc + "syscall");
  std::string where = "?";
  unsigned long long arg = 0;
  if (std::sscanf(syscall.c_str(), "%*d %llx", &arg) == 1) {
    std::string maps = readFile(proc + "maps");
    size_t at = 0;
    while (at < maps.size()) {
      size_t end = maps.find('\n', at);
      if (end == std::string::npos) end = maps.size();
      std::string line = maps.substr(at, end - at);
      unsigned long long lo = 0, hi = 0;
      if (std::sscanf(line.c_str(), "%llx-%llx", &lo, &hi) == 2 && arg >= lo && arg < hi) {
        size_t path = line.find('/');
        where = path == std::string::npos ? "[anonymous]" : line.substr(path);
        break;
      }
      at = end + 1;
    }
  }
  const std::string stacks = stacksOf(pid);
  return "syscall " + syscall + "; first argument in " + where + "; wchan " +
         firstLine(proc + "wchan") + (stacks.empty() ? "" : "; its threads:\n" + stacks);
}

// Waits for `pid` until `deadline`; a child still alive then is killed and
// the wait reports false (a hung child is the failure these tests look for).
// `stuck`, if given, gets describeStuckProcess() of a child that hung.
inline bool waitWithDeadline(pid_t pid, int* status, std::chrono::milliseconds deadline,
                             std::string* stuck = nullptr) {
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    pid_t w = ::waitpid(pid, status, WNOHANG);
    if (w == pid) return true;
    if (w < 0) return false;
    if (std::chrono::steady_clock::now() > until) {
      if (stuck) *stuck = describeStuckProcess(pid);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// How a child ended.
struct ChildResult {
  bool exited = false;  // reaped in time; false: killed by us at the deadline (or never started)
  int status = 0;       // as waitpid(2) gives it
  std::string stderrText;

  // The exit code, or -1 if the child did not exit normally in time.
  int exitCode() const { return exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Runs `body` in a forked child with stderr sent to a file in `dir` and no
// core files (the crashes tests provoke are slow and big to dump), and waits
// at most `deadline` for it. The child exits 0 if `body` returns. A child
// still alive at the deadline is killed and reported as not exited.
inline ChildResult runInChild(const TempDir& dir, const std::function<void()>& body,
                              std::chrono::milliseconds deadline = std::chrono::seconds(20)) {
  ChildResult r;
  const std::string errPath = dir.file("stderr.txt");
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid == 0) {
    struct rlimit noCore = {0, 0};
    ::setrlimit(RLIMIT_CORE, &noCore);
    if (std::freopen(errPath.c_str(), "w", stderr) == nullptr) ::_exit(100);
    // Unbuffered, as stderr was: what the child reports reaches the file even
    // when it ends with _exit or a signal.
    std::setvbuf(stderr, nullptr, _IONBF, 0);
    body();
    ::_exit(0);
  }
  if (pid < 0) return r;
  r.exited = waitWithDeadline(pid, &r.status, deadline);
  r.stderrText = readFile(errPath);
  return r;
}

// Runs the program argv[0] with `argv` and exactly the environment `env`
// ("NAME=value" each), stdout to /dev/null and stderr to a file in `dir`;
// waits as runInChild does.
inline ChildResult runProgram(const TempDir& dir, std::vector<std::string> argv,
                              std::vector<std::string> env,
                              std::chrono::milliseconds deadline = std::chrono::seconds(20)) {
  ChildResult r;
  const std::string errPath = dir.file("stderr.txt");
  std::vector<char*> argvp, envp;
  for (std::string& a : argv) argvp.push_back(&a[0]);
  argvp.push_back(nullptr);
  for (std::string& e : env) envp.push_back(&e[0]);
  envp.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int devNull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (err < 0 || devNull < 0) ::_exit(126);
    ::dup2(err, STDERR_FILENO);
    ::dup2(devNull, STDOUT_FILENO);
    ::execve(argvp[0], argvp.data(), envp.data());
    ::_exit(127);
  }
  if (pid < 0) return r;
  r.exited = waitWithDeadline(pid, &r.status, deadline);
  r.stderrText = readFile(errPath);
  return r;
}

}  // namespace test
}  // namespace muon
