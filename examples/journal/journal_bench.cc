// journal_bench: lines per second into systemd-journald, muon's JournaldSink
// against spdlog's systemd_sink (sd_journal_send), the same statement each:
//   "Hello 0123456789 abcdefghijklmnopqrstuvwxyz <i> user=alice count=<i>"
// at INFO with its source location; muon's entry also carries USER and COUNT
// as journal fields. Both write to /run/systemd/journal/socket, so run it
// where that is the journald to measure (examples/bench/journal_bench.sh
// starts a private one in its own mount namespace).
//
//   journal_bench --logger muon|spdlog|floor [--lines N] [--identifier NAME]
//
// floor is no logger: the message in the smallest entry the script counts,
// sent on the calling thread; journald's own cost a line bounds every
// logger's rate.
//
// Prints one line:
//   journal_bench: LOGGER lines N calls_seconds C delivered_seconds D lines_per_second L lost X
// C: the N statements on the calling thread; D: until the last line was
// handed to journald's socket (muon: flush() returned; spdlog sends on the
// caller, so D is C); L = N / D; X: lines the sink counted dropped or lost
// (spdlog counts none: it throws on a failed send).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "CommandLine.h"
#include "SpdlogJournal.h"
#include "muon/base/JournaldSink.h"
#include "muon/base/LogFields.h"
#include "muon/base/Logging.h"

namespace {

const char kUsage[] =
    "usage: journal_bench --logger muon|spdlog|floor [--lines N] [--identifier NAME]\n"
    "  --logger      muon (JournaldSink), spdlog (systemd_sink) or floor (no logger: the\n"
    "                message as MESSAGE, PRIORITY and SYSLOG_IDENTIFIER, sent with send(2))\n"
    "  --lines       statements, 1..100000000 (default 100000)\n"
    "  --identifier  SYSLOG_IDENTIFIER (default journal_bench)\n";

}  // namespace

void report(const char* logger, long lines, double calls, double delivered, unsigned long long lost) {
  std::printf("journal_bench: %s lines %ld calls_seconds %.6f delivered_seconds %.6f "
              "lines_per_second %.0f lost %llu\n",
              logger, lines, calls, delivered, static_cast<double>(lines) / delivered, lost);
}

namespace {

void runMuon(long lines, const std::string& identifier) {
  muon::JournaldOptions options;
  options.identifier = identifier;
  options.queueCapacity = static_cast<size_t>(lines);  // measure journald, not the queue
  options.sendTimeoutMs = 10000;
  options.flushTimeoutMs = 600000;
  muon::JournaldSink sink(options);
  auto attached = muon::Logger::attach(sink);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < lines; ++i) {
    LOG_INFO << "Hello 0123456789 abcdefghijklmnopqrstuvwxyz " << i << muon::kv("user", "alice")
             << muon::kv("count", i);
  }
  const double calls = secondsSince(start);
  sink.flush();
  const double delivered = secondsSince(start);
  const muon::JournaldSink::Stats s = sink.stats();
  report("muon", lines, calls, delivered, static_cast<unsigned long long>(s.dropped + s.lost));
}

// No logger: the same message as the smallest entry the benchmark can count
// (MESSAGE, PRIORITY, SYSLOG_IDENTIFIER), built and sent with a blocking send(2) on the
// calling thread. What journald itself costs a line: no logger can deliver
// faster.
void runFloor(long lines, const std::string& identifier) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, "/run/systemd/journal/socket");
  if (fd < 0 || ::connect(fd, reinterpret_cast<const struct sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("journal_bench: floor: connect");
    std::exit(1);
  }
  unsigned long long lost = 0;
  char entry[512];
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < lines; ++i) {
    const int n = std::snprintf(entry, sizeof entry,
                                "MESSAGE=Hello 0123456789 abcdefghijklmnopqrstuvwxyz %ld user=alice "
                                "count=%ld\nPRIORITY=6\nSYSLOG_IDENTIFIER=%s\n",
                                i, i, identifier.c_str());
    if (::send(fd, entry, static_cast<size_t>(n), 0) != n) ++lost;
  }
  const double calls = secondsSince(start);
  ::close(fd);
  report("floor", lines, calls, calls, lost);
}

}  // namespace

int main(int argc, char* argv[]) {
  if (muon::examples::helpRequested(argc, argv)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string logger;
  long lines = 100000;
  std::string identifier = "journal_bench";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool hasValue = i + 1 < argc;
    if (arg == "--logger" && hasValue) {
      logger = argv[++i];
    } else if (arg == "--lines" && hasValue) {
      if (!muon::examples::parseInt(argv[++i], 1, 100000000, &lines)) {
        std::fprintf(stderr, "journal_bench: --lines takes 1..100000000, not '%s'\n%s", argv[i], kUsage);
        return 2;
      }
    } else if (arg == "--identifier" && hasValue) {
      identifier = argv[++i];
    } else {
      std::fprintf(stderr, "journal_bench: unknown or incomplete argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
  }
  if (logger == "muon") {
    runMuon(lines, identifier);
  } else if (logger == "spdlog") {
    runSpdlog(lines, identifier);
  } else if (logger == "floor") {
    runFloor(lines, identifier);
  } else {
    std::fprintf(stderr, "journal_bench: --logger muon, spdlog or floor\n%s", kUsage);
    return 2;
  }
  return 0;
}
