// Helpers for the shipper's tests (MuonShip_test, LogShipper_test): muon log
// lines with a number in them, log files written under chosen names, the
// numbers rsyslogd received, and muon-ship run as a child process that is
// always reaped. For tests only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "Rsyslogd.h"
#include "TempDir.h"

namespace muon {
namespace test {

// A line in muon's layout: "20261127 01:00:00.000000Z  4242 INFO  ship 0000042 ... - ship.cc:7\n".
inline std::string shipLine(uint64_t n) {
  char buf[128];
  std::snprintf(buf, sizeof buf,
                "20261127 01:00:00.%06lluZ  4242 INFO  ship %07llu padding padding - ship.cc:7\n",
                static_cast<unsigned long long>(n % 1000000), static_cast<unsigned long long>(n));
  return buf;
}

inline std::string shipLines(uint64_t from, uint64_t to) {
  std::string text;
  for (uint64_t i = from; i < to; ++i) text += shipLine(i);
  return text;
}

inline void appendTo(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

// How often each number arrived, from rsyslogd's lines of `app`; lines
// without a number ("muon-ship: ... not shipped") go to *others.
inline std::map<uint64_t, int> shipArrivals(const Rsyslogd& daemon, const std::string& app,
                                            std::vector<std::string>* others = nullptr) {
  std::map<uint64_t, int> seen;
  for (const std::string& line : daemon.received(app)) {
    const size_t at = line.find(" ship ");
    if (at == std::string::npos) {
      if (others) others->push_back(line);
      continue;
    }
    ++seen[std::stoull(line.substr(at + 6, 7))];
  }
  return seen;
}

#ifdef MUON_SHIP_PATH
// muon-ship (the build's, MUON_SHIP_PATH) as a child: stdout and stderr to
// files in `dir`; killed and reaped by the destructor if still running.
class ShipProcess {
 public:
  ShipProcess(const TempDir& dir, std::vector<std::string> args, const std::string& tag = "ship")
      : out_(dir.file(tag + ".out")), err_(dir.file(tag + ".err")) {
    args.insert(args.begin(), MUON_SHIP_PATH);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(&a[0]);
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(out, STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~ShipProcess() { signal(SIGKILL); }
  ShipProcess(const ShipProcess&) = delete;
  ShipProcess& operator=(const ShipProcess&) = delete;

  // Sends `sig` and waits (at most `timeout`, then SIGKILL) for the end:
  // the exit code, or -1 if it did not exit by itself.
  int signal(int sig, std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
    if (pid_ <= 0) return code_;
    ::kill(pid_, sig);
    return wait(timeout);
  }
  int wait(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return code_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return code_;
  }
  std::string out() const { return readFile(out_); }
  std::string err() const { return readFile(err_); }

 private:
  std::string out_;
  std::string err_;
  pid_t pid_ = -1;
  int code_ = -1;
};
#endif

}  // namespace test
}  // namespace muon
