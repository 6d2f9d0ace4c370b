// A private systemd-journald for tests, in a mount namespace of its own:
// /run is a fresh tmpfs there, with /run/systemd and /run/log bound to
// directories of a temporary directory, and /etc/systemd/journald.conf
// bound to a configuration of the test's (volatile storage, no kernel log,
// no forwarding, no rate limit). So its native socket is
// <dir>/systemd/journal/socket for the test, its journal <dir>/log/journal,
// read with `journalctl -D`, and the system's journald and journal are never
// touched. Needs root (unshare(CLONE_NEWNS)). The daemon is always killed
// and reaped by the destructor, and dies with the test process
// (PR_SET_PDEATHSIG) if that crashes first. For tests only.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace muon {
namespace test {

class Journald {
 public:
  static constexpr const char* kBinary = "/lib/systemd/systemd-journald";
  static constexpr const char* kJournalctl = "/usr/bin/journalctl";

  Journald() {
    char pattern[] = "/tmp/muon-journald-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    dir_ = made ? made : "";
    ::mkdir((dir_ + "/systemd").c_str(), 0755);
    ::mkdir((dir_ + "/log").c_str(), 0755);
    std::ofstream conf(dir_ + "/journald.conf");
    conf << "[Journal]\nStorage=volatile\nReadKMsg=no\nForwardToSyslog=no\nForwardToKMsg=no\n"
            "ForwardToConsole=no\nForwardToWall=no\nRateLimitIntervalSec=0\nRuntimeMaxUse=512M\n"
            "RuntimeMaxFileSize=128M\n";
  }
  ~Journald() {
    kill();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  Journald(const Journald&) = delete;
  Journald& operator=(const Journald&) = delete;

  // Whether a test that cannot have its journald must fail rather than
  // skip: under CI (env CI) or when MUON_REQUIRE_ALL is set (./build.sh test).
  static bool required() {
    return std::getenv("CI") != nullptr || std::getenv("MUON_REQUIRE_ALL") != nullptr;
  }

  // Whether the last start() failed because this machine refuses a mount
  // namespace: a feature it lacks, which a test skips for even under
  // ./build.sh test (journald itself is installed there).
  bool namespaceRefused() const { return namespaceRefused_; }

  // Starts journald and waits until its native socket is bound. False, with
  // the reason in *why, if it cannot run here.
  bool start(std::string* why) {
    if (::access(kBinary, X_OK) != 0 || ::access(kJournalctl, X_OK) != 0) {
      *why = std::string(kBinary) + " or journalctl is not installed (Debian package systemd)";
      return false;
    }
    ::unlink(socketPath().c_str());
    const std::string err = dir_ + "/journald.err";
    const std::string systemd = dir_ + "/systemd";
    const std::string log = dir_ + "/log";
    const std::string conf = dir_ + "/journald.conf";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd >= 0) ::dup2(fd, STDERR_FILENO);
      const auto fail = [](const char* what, int status) {
        std::fprintf(stderr, "%s: %s\n", what, std::strerror(errno));
        ::_exit(status);
      };
      // The namespace refused (no root, a container without CAP_SYS_ADMIN):
      // the machine lacks the feature, kNoNamespace says so.
      if (::unshare(CLONE_NEWNS) != 0) fail("unshare(CLONE_NEWNS)", kNoNamespace);
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        fail("mount --make-rprivate /", kNoNamespace);
      }
      if (::mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") != 0) fail("mount tmpfs /run", kNoNamespace);
      ::mkdir("/run/systemd", 0755);
      ::mkdir("/run/log", 0755);
      if (::mount(systemd.c_str(), "/run/systemd", nullptr, MS_BIND, nullptr) != 0) fail("bind /run/systemd", 126);
      if (::mount(log.c_str(), "/run/log", nullptr, MS_BIND, nullptr) != 0) fail("bind /run/log", 126);
      if (::mount(conf.c_str(), "/etc/systemd/journald.conf", nullptr, MS_BIND, nullptr) != 0) {
        fail("bind /etc/systemd/journald.conf", 126);
      }
      ::execl(kBinary, kBinary, static_cast<char*>(nullptr));
      fail("exec systemd-journald", 126);
    }
    if (pid_ < 0) {
      *why = "fork failed";
      return false;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        namespaceRefused_ = WIFEXITED(status) && WEXITSTATUS(status) == kNoNamespace;
        *why = "systemd-journald exited at start-up (status " + std::to_string(status) + "): " +
               readAll(err);
        return false;
      }
      struct stat st;
      if (::stat(socketPath().c_str(), &st) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    *why = "systemd-journald did not bind its socket within 10 s";
    kill();
    return false;
  }

  // SIGKILL, as a crash; then reaped.
  void kill() { signalAndReap(SIGKILL); }
  // Stops and resumes it (SIGSTOP, SIGCONT): a journald that does not read.
  void pause() { if (pid_ > 0) ::kill(pid_, SIGSTOP); }
  void resume() { if (pid_ > 0) ::kill(pid_, SIGCONT); }

  std::string socketPath() const { return dir_ + "/systemd/journal/socket"; }
  const std::string& dir() const { return dir_; }

  // The entries whose SYSLOG_IDENTIFIER is `identifier`, as
  // `journalctl -o json --all` gives them (a value that is not text is an
  // array of its bytes).
  std::vector<nlohmann::json> entries(const std::string& identifier) const {
    const std::string command = std::string(kJournalctl) + " -D '" + dir_ +
                                "/log/journal' -o json --all --no-pager SYSLOG_IDENTIFIER=" +
                                identifier + " 2>/dev/null";
    std::vector<nlohmann::json> out;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return out;
    std::string line;
    char chunk[65536];
    size_t n;
    std::string all;
    while ((n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) all.append(chunk, n);
    ::pclose(pipe);
    size_t begin = 0;
    while (begin < all.size()) {
      size_t end = all.find('\n', begin);
      if (end == std::string::npos) end = all.size();
      if (end > begin) {
        nlohmann::json j = nlohmann::json::parse(all.substr(begin, end - begin), nullptr, false);
        if (!j.is_discarded()) out.push_back(std::move(j));
      }
      begin = end + 1;
    }
    return out;
  }
  // Waits until at least n entries of `identifier` are in the journal;
  // false after the timeout.
  bool waitFor(const std::string& identifier, size_t n, std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (entries(identifier).size() < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  // A field's bytes: journalctl writes text as a string, anything else as
  // an array of numbers.
  static std::string bytesOf(const nlohmann::json& value) {
    if (value.is_string()) return value.get<std::string>();
    std::string out;
    if (value.is_array()) {
      for (const auto& b : value) out += static_cast<char>(b.get<int>());
    }
    return out;
  }

 private:
  static std::string readAll(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  void signalAndReap(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  static constexpr int kNoNamespace = 125;  // the child's exit status

  std::string dir_;
  pid_t pid_ = -1;
  bool namespaceRefused_ = false;
};

}  // namespace test
}  // namespace muon
