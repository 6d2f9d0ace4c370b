// A private rsyslogd for tests: its own configuration, pid file, work
// directory, UNIX socket and loopback ports, all in a temporary directory.
// It does not open /dev/log (imuxsock's system socket is off), the journal or
// the kernel log, and never touches a system daemon. Every message it
// receives is written to out.log as "SEVERITY APP-NAME MSG". The process is
// always killed and reaped by the destructor, and dies with the test process
// (PR_SET_PDEATHSIG) if that crashes first. enableRelp() adds an imrelp
// input on a loopback port of its own, with the main queue Direct, so that
// an acknowledgement means written. For tests only.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <glob.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "LoopbackSocket.h"
#include "TempDir.h"

namespace muon {
namespace test {

class Rsyslogd {
 public:
  static constexpr const char* kBinary = "/usr/sbin/rsyslogd";

  Rsyslogd() { ::mkdir(dir_.file("work").c_str(), 0700); }
  ~Rsyslogd() {
    kill();
    for (const std::string& file : TempDir::filesIn(dir_.file("work"))) ::unlink(file.c_str());
    ::rmdir(dir_.file("work").c_str());
  }
  Rsyslogd(const Rsyslogd&) = delete;
  Rsyslogd& operator=(const Rsyslogd&) = delete;

  // Extra configuration (e.g. an imfile input) added before the output.
  void addConfig(const std::string& text) { extra_ += text; }

  // Before the first start(): an imrelp input (Debian package rsyslog-relp)
  // on a loopback port chosen now, so a client may be pointed at it before
  // the daemon runs, and kept on restarts; the main queue becomes Direct.
  // False, with the reason in *why, if it cannot be had here.
  bool enableRelp(std::string* why) {
    glob_t found;
    const bool installed = ::glob("/usr/lib/*/rsyslog/imrelp.so", 0, nullptr, &found) == 0 ||
                           ::glob("/usr/lib/rsyslog/imrelp.so", 0, nullptr, &found) == 0;
    ::globfree(&found);
    if (!installed) {
      *why = "rsyslog's imrelp.so is not installed (Debian package rsyslog-relp)";
      return false;
    }
    relpPort_ = pickPort(SOCK_STREAM, why);
    return relpPort_ != 0;
  }
  uint16_t relpPort() const { return relpPort_; }
  // After enableRelp(), before start(): the imrelp input speaks only TLS
  // (librelp's OpenSSL driver) with this CA, certificate and key (PEM), and
  // requires a client certificate signed by the CA (tls.authMode certvalid:
  // mutual authentication).
  void enableRelpTls(const std::string& ca, const std::string& cert, const std::string& key) {
    relpTls_ = " tls=\"on\" tls.cacert=\"" + ca + "\" tls.mycert=\"" + cert +
               "\" tls.myprivkey=\"" + key + "\" tls.authMode=\"certvalid\"";
  }

  // Whether a test that cannot have its rsyslogd must fail rather than
  // skip: under CI (env CI) or when MUON_REQUIRE_ALL is set (./build.sh test).
  static bool required() {
    return std::getenv("CI") != nullptr || std::getenv("MUON_REQUIRE_ALL") != nullptr;
  }

  // Starts rsyslogd in the foreground and waits until its inputs listen.
  // The TCP and UDP ports are chosen on the first start and kept on restarts.
  // False, with the reason in *why, if it cannot run here.
  bool start(std::string* why) {
    if (::access(kBinary, X_OK) != 0) {
      *why = std::string(kBinary) + " is not installed (Debian package rsyslog)";
      return false;
    }
    if (udpPort_ == 0 && (udpPort_ = pickPort(SOCK_DGRAM, why)) == 0) return false;
    ::unlink(portFile().c_str());
    writeConfig();
    const std::string errFile = dir_.file("rsyslogd.err");
    const std::string conf = dir_.file("rsyslog.conf");
    const std::string pidFile = dir_.file("rsyslogd.pid");
    // vfork, as posix_spawn: the child shares the test's memory until it
    // execs, so the test's page tables are not copied; a fork() would stall
    // every thread of the test that touches memory meanwhile (a few ms),
    // which a test timing its own threads around a restart would measure.
    // The child only makes system calls.
    pid_ = ::vfork();
    if (pid_ == 0) {
      // Dies with the test, even if the test itself crashes.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int err = ::open(errFile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (err >= 0) ::dup2(err, STDERR_FILENO);
      ::execl(kBinary, kBinary, "-n", "-f", conf.c_str(), "-i", pidFile.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid_ < 0) {
      *why = "fork failed";
      return false;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        *why = "rsyslogd exited at start-up (status " + std::to_string(status) + "): " +
               readAll(dir_.file("rsyslogd.err"));
        return false;
      }
      struct stat st;
      if (tcpPort_ == 0) readPortFile();
      if (tcpPort_ != 0 && ::stat(unixSocket().c_str(), &st) == 0 &&
          (relpPort_ == 0 || accepts(relpPort_))) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    *why = "rsyslogd did not open its inputs within 10 s";
    kill();
    return false;
  }

  // SIGKILL, as a crash; then reaped.
  void kill() { signalAndReap(SIGKILL); }
  // SIGSTOP, and waits until every thread of it has stopped: it reads and
  // writes nothing more until kill() (a test that kills it can look first
  // at what it held).
  void pause() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGSTOP);
    int status = 0;
    while (::waitpid(pid_, &status, WUNTRACED) < 0 && errno == EINTR) {
    }
  }
  // SIGTERM, a clean stop; then reaped.
  void stop() { signalAndReap(SIGTERM); }

  std::string unixSocket() const { return dir_.file("log.sock"); }
  uint16_t tcpPort() const { return tcpPort_; }
  uint16_t udpPort() const { return udpPort_; }
  const TempDir& dir() const { return dir_; }

  // Lines of out.log whose APP-NAME is `app`, without it: "SEVERITY MSG".
  std::vector<std::string> received(const std::string& app) const {
    std::vector<std::string> lines;
    std::ifstream in(dir_.file("out.log"));
    std::string line;
    const std::string tag = ' ' + app + ' ';
    while (std::getline(in, line)) {
      size_t at = line.find(tag);
      if (at != std::string::npos) lines.push_back(line.substr(0, at) + ' ' + line.substr(at + tag.size()));
    }
    return lines;
  }
  // Waits until a line from `app` holding `text` arrived; false after the timeout.
  bool waitForLine(const std::string& app, const std::string& text,
                   std::chrono::milliseconds timeout) const {
    return waitUntil(timeout, [&] {
      for (const std::string& line : received(app)) {
        if (line.find(text) != std::string::npos) return true;
      }
      return false;
    });
  }
  // Waits until at least n lines from `app` arrived; false after the timeout.
  bool waitFor(const std::string& app, size_t n, std::chrono::milliseconds timeout) const {
    return waitUntil(timeout, [&] { return received(app).size() >= n; });
  }

 private:
  // Polls `done` every 10 ms until it answers true; false after the timeout.
  template <typename Done>
  static bool waitUntil(std::chrono::milliseconds timeout, Done done) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  std::string portFile() const { return dir_.file("tcp.port"); }

  static std::string readAll(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  void readPortFile() {
    // rsyslogd writes the number whole, without a newline.
    std::string text = readAll(portFile());
    if (!text.empty() && text.find_first_not_of("0123456789\n") == std::string::npos) {
      tcpPort_ = static_cast<uint16_t>(std::stoi(text));
    }
  }

  // imudp and imrelp cannot report a port they chose, so one is taken from
  // the kernel (bind to port 0) and handed over; kept for restarts. 0, with
  // the reason in *why, if there is none.
  static uint16_t pickPort(int type, std::string* why) {
    uint16_t port = 0;
    const int fd = bindLoopback(type, &port);
    if (fd < 0) {
      *why = "no free loopback port";
      return 0;
    }
    ::close(fd);
    return port;
  }

  // Whether something listens on the loopback TCP port.
  static bool accepts(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0;
    if (fd >= 0) ::close(fd);
    return ok;
  }

  void writeConfig() {
    std::ofstream conf(dir_.file("rsyslog.conf"));
    conf << "global(workDirectory=\"" << dir_.file("work") << "\" maxMessageSize=\"8k\")\n"
         << "module(load=\"imuxsock\" SysSock.Use=\"off\")\n"
         << "input(type=\"imuxsock\" Socket=\"" << unixSocket() << "\")\n"
         << "module(load=\"imudp\")\n"
         << "input(type=\"imudp\" address=\"127.0.0.1\" port=\"" << udpPort_ << "\")\n"
         << "module(load=\"imtcp\")\n"
         << "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"" << tcpPort_
         << "\" listenPortFileName=\"" << portFile() << "\")\n"
         << relpConfig()
         << extra_
         << "template(name=\"muonTest\" type=\"string\" "
            "string=\"%syslogseverity% %app-name% %msg%\\n\")\n"
         << "action(type=\"omfile\" file=\"" << dir_.file("out.log")
         << "\" template=\"muonTest\")\n";
  }

  std::string relpConfig() const {
    if (relpPort_ == 0) return std::string();
    return "main_queue(queue.type=\"Direct\")\n" +
           std::string(relpTls_.empty() ? "module(load=\"imrelp\")\n"
                                        : "module(load=\"imrelp\" tls.tlslib=\"openssl\")\n") +
           "input(type=\"imrelp\" address=\"127.0.0.1\" port=\"" + std::to_string(relpPort_) +
           "\"" + relpTls_ + ")\n";
  }

  void signalAndReap(int sig) {
    if (pid_ > 0) {
      ::kill(pid_, sig);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
      ::unlink(unixSocket().c_str());  // a killed rsyslogd leaves it behind
    }
  }

  TempDir dir_;
  std::string extra_;
  pid_t pid_ = -1;
  uint16_t tcpPort_ = 0;
  uint16_t udpPort_ = 0;
  uint16_t relpPort_ = 0;
  std::string relpTls_;  // the imrelp input's TLS parameters, or ""
};

}  // namespace test
}  // namespace muon

// In a test: fails (CI, MUON_REQUIRE_ALL: Rsyslogd::required()) or skips,
// saying why, unless `ok` (an rsyslogd with imrelp could be started).
#define MUON_REQUIRE_RELP_OR_SKIP(ok, why)                                   \
  do {                                                                       \
    if (!(ok)) {                                                             \
      if (muon::test::Rsyslogd::required()) {                                \
        FAIL() << "rsyslogd with imrelp: " << (why);                         \
      }                                                                      \
      GTEST_SKIP() << "no rsyslogd with imrelp: " << (why);                  \
    }                                                                        \
  } while (0)
