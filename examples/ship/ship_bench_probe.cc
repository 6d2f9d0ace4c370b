// ship_bench_probe: the shipping benchmark's measuring hand
// (examples/bench/ship_bench.sh), so that the script needs no parsing of
// its own:
//
//   ship_bench_probe port
//     prints a free loopback TCP port (bound to port 0, then released), for
//     an rsyslogd's imrelp input, which cannot report the port it took.
//   ship_bench_probe wait FILE LINES SINCE_NS TIMEOUT_S SENDER_PID [OTHER_PID]
//     follows FILE (the receiving rsyslogd's output, one line per message)
//     until it holds LINES lines, reading only new bytes, every 5 ms. Then
//     prints one line:
//       seconds S sender_cpu C other_cpu O
//     S: from SINCE_NS (CLOCK_REALTIME, as `date +%s%N`) to the moment the
//     count was seen; C, O: the user + system CPU seconds the processes
//     have used (/proc/PID/stat, all threads; O is 0 without OTHER_PID).
//     Exit 1 (and what was counted) if TIMEOUT_S passes or the sender dies
//     first.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "CommandLine.h"

namespace {

int usage(bool help = false) {
  std::fputs("usage: ship_bench_probe port\n"
             "       ship_bench_probe wait FILE LINES SINCE_NS TIMEOUT_S SENDER_PID [OTHER_PID]\n",
             help ? stdout : stderr);
  return help ? 0 : 2;
}

int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<struct sockaddr*>(&addr), &len) != 0) {
    std::perror("ship_bench_probe: no free loopback port");
    return 1;
  }
  ::close(fd);
  std::printf("%u\n", ntohs(addr.sin_port));
  return 0;
}

// From /proc/PID/stat: whether `pid` runs (exists and is not a zombie:
// a dead child of a shell that is waiting for us is not reaped yet), and
// its user + system CPU seconds (all its threads).
bool procStat(long pid, double* cpuSeconds) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name may hold spaces: the fields after it start at ") ".
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  std::istringstream fields(text.substr(close + 2));
  std::string field, state;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 3) state = field;
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  if (cpuSeconds) {
    *cpuSeconds = static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return state != "Z" && state != "X";
}

int64_t epochNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int wait(int argc, char* argv[]) {
  long lines = 0, timeout = 0, sender = 0, other = 0;
  const char* file = argv[2];
  const long long since = std::atoll(argv[4]);
  if (!muon::examples::parseInt(argv[3], 1, 1L << 40, &lines) ||
      !muon::examples::parseInt(argv[5], 1, 86400, &timeout) ||
      !muon::examples::parseInt(argv[6], 1, 1L << 30, &sender) ||
      (argc == 8 && !muon::examples::parseInt(argv[7], 1, 1L << 30, &other)) || since <= 0) {
    return usage();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  long counted = 0;
  int fd = -1;
  char buf[1 << 16];
  while (counted < lines) {
    if (fd < 0) fd = ::open(file, O_RDONLY | O_CLOEXEC);
    ssize_t n = 0;
    if (fd >= 0) {
      while ((n = ::read(fd, buf, sizeof buf)) > 0) {
        for (const char* p = buf; (p = static_cast<const char*>(std::memchr(p, '\n', buf + n - p)));
             ++p) {
          ++counted;
        }
      }
    }
    if (counted >= lines) break;
    const bool alive = procStat(sender, nullptr);
    if (!alive || std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "ship_bench_probe: %ld of %ld lines in %s when the sender %s\n", counted,
                   lines, file, alive ? "timed out" : "ended");
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double seconds = static_cast<double>(epochNs() - since) / 1e9;
  double senderCpu = 0, otherCpu = 0;
  procStat(sender, &senderCpu);
  if (other > 0) procStat(other, &otherCpu);
  std::printf("seconds %.3f sender_cpu %.2f other_cpu %.2f\n", seconds, senderCpu, otherCpu);
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  if (muon::examples::helpRequested(argc, argv)) return usage(true);
  if (argc == 2 && std::strcmp(argv[1], "port") == 0) return freePort();
  if ((argc == 7 || argc == 8) && std::strcmp(argv[1], "wait") == 0) return wait(argc, argv);
  return usage();
}
