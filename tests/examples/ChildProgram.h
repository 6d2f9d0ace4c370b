// ChildProgram: an example program run as a child process, the way a user
// runs it, for the tests of the book's examples. Its stdout and stderr go
// to one file the test reads: the "listening on ADDRESS:PORT" lines give
// the ports (the programs are started with port 0), the log lines what the
// server saw, each in the file once its statement has returned (the
// Logger's default output writes a line at a time). For tests only; one
// thread drives each child.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "TempDir.h"

namespace muon {
namespace test {

class ChildProgram {
 public:
  // Starts MUON_EXAMPLES_BIN_DIR/name with args. With `pipeStdin` its
  // stdin is a pipe fed by writeStdin() and ended by closeStdin().
  ChildProgram(const std::string& name, const std::vector<std::string>& args, bool pipeStdin = false)
      : name_(name) {
    int stdinPipe[2] = {-1, -1};
    if (pipeStdin) {
      ::signal(SIGPIPE, SIG_IGN);  // a child that is gone fails writeStdin, not the test
      if (::pipe2(stdinPipe, O_CLOEXEC) != 0) return;
    }
    const std::string path = std::string(MUON_EXAMPLES_BIN_DIR) + "/" + name;
    const std::string out = dir_.file("output");
    std::vector<std::string> argStrings{path};
    argStrings.insert(argStrings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argStrings) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      // Only async-signal-safe calls between fork and exec: the test
      // process has threads. The child dies with the test (a test killed
      // by ctest's timeout leaves no server behind).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0 || ::dup2(fd, STDERR_FILENO) < 0) ::_exit(126);
      if (pipeStdin && ::dup2(stdinPipe[0], STDIN_FILENO) < 0) ::_exit(126);
      ::execv(path.c_str(), argv.data());
      ::_exit(127);
    }
    if (pipeStdin) {
      ::close(stdinPipe[0]);
      stdin_ = stdinPipe[1];
    }
  }
  ~ChildProgram() {
    closeStdin();
    if (pid_ > 0 && status_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ChildProgram(const ChildProgram&) = delete;
  ChildProgram& operator=(const ChildProgram&) = delete;

  bool writeStdin(const std::string& data) {
    return stdin_ >= 0 && ::write(stdin_, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  }
  void closeStdin() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
  }

  std::string output() const {
    std::ifstream in(dir_.file("output"));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  size_t count(const std::string& text) const {
    const std::string all = output();
    size_t n = 0;
    for (size_t pos = all.find(text); pos != std::string::npos; pos = all.find(text, pos + 1)) ++n;
    return n;
  }
  // Until `text` has appeared `times` times; false on timeout or exit.
  bool waitForOutput(const std::string& text, size_t times = 1,
                     std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (count(text) < times) {
      if (exited() || std::chrono::steady_clock::now() > deadline) return count(text) >= times;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }
  // The port of the first "<what> listening on ADDRESS:PORT" line (`what`
  // a whole word: "time" is not "daytime"); 0 if none came (the program
  // exited, or 20 s passed).
  uint16_t port(const std::string& what = "") {
    const std::string marker = what.empty() ? "listening on " : " " + what + " listening on ";
    if (!waitForOutput(marker)) return 0;
    const std::string all = output();
    const size_t at = all.find(marker) + marker.size();
    const size_t end = all.find_first_of(" ,\n", at);
    const size_t colon = all.rfind(':', end);
    return static_cast<uint16_t>(std::atoi(all.substr(colon + 1, end - colon - 1).c_str()));
  }

  // How many descriptors the child has open (-1 once it has exited): a
  // server back at its idle count has closed every connection.
  int openFds() const {
    DIR* dir = ::opendir(("/proc/" + std::to_string(pid_) + "/fd").c_str());
    if (dir == nullptr) return -1;
    int n = 0;
    while (struct dirent* e = ::readdir(dir)) {
      if (e->d_name[0] != '.') ++n;
    }
    ::closedir(dir);
    return n;
  }
  // Until openFds() == n; false after 20 s.
  bool waitForOpenFds(int n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (openFds() != n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  void kill(int sig) {
    if (!exited()) ::kill(pid_, sig);
  }
  // The exit status, 128 + N if killed by signal N, -1 if still running
  // after `timeout`.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!exited() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return status_;
  }
  // SIGTERM, then true if it exited with status 0 and logged its stop line.
  bool stopsCleanly() {
    kill(SIGTERM);
    return wait() == 0 && count(name_ + " stopping on signal 15") == 1;
  }

 private:
  bool exited() {
    if (status_ >= 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }

  const std::string name_;
  TempDir dir_;
  pid_t pid_ = -1;
  int stdin_ = -1;  // the write end of the child's stdin pipe
  int status_ = -1;  // set once reaped
};

}  // namespace test
}  // namespace muon
