// soak: the long run. A pingpong server and its clients in one process for
// M minutes, every line logged through AsyncLogging; once a minute (and at
// the start) it prints RSS, open fds and lines dropped, which must stay flat.
//
//   soak [--minutes M] [--sessions S] [--dir DIR] [--threads T] [--policy drop|block]
//
// Load: S sessions (default 1000) bounce 4 KiB blocks off the server over
// 127.0.0.1, with T I/O loops on each side (default 1: the machine the
// results are from has 2 cores). The server logs a line per 5 messages and
// one per connection event, and every second closes its 5 oldest
// connections, which reconnect at once: a leak per connection would show.
// Logs go to DIR/soak.*.log, rolled every 64 MiB; without --dir, to a
// temporary directory removed at the end. The policy is AsyncLogging's
// overflow rule (default drop, its own default).
//
// Verdict, the last line: "flat" (exit 0) if RSS at no later minute is more
// than 10% above minute 1's (minute 0 to 1 is warm-up: connection buffers
// grow to their working size, log buffers get mapped), the fd count is the
// same at every sample, no line was dropped, and every byte logged reached
// the files; else "NOT flat" (exit 1). Bad arguments: usage, exit 2.
#include "Soak.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"

#include "CommandLine.h"

namespace {

constexpr off_t kRollSize = 64 * 1024 * 1024;  // several rolls in ten minutes
constexpr int kFlushInterval = 3;              // AsyncLogging's usual
constexpr double kRssBound = 0.10;

struct Args {
  soak::Options options;
  std::string dir;  // empty: a temporary one
  muon::AsyncLogging::OverflowPolicy policy = muon::AsyncLogging::kDrop;
};

bool parseInt(const char* s, long lo, long hi, int* out) {
  long v = 0;
  if (!muon::examples::parseInt(s, lo, hi, &v)) return false;
  *out = static_cast<int>(v);
  return true;
}

bool parseArgs(int argc, char* argv[], Args* args) {
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) return false;
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    bool ok = true;
    if (flag == "--minutes") {
      ok = parseInt(value, 1, 24 * 60, &args->options.minutes);
    } else if (flag == "--sessions") {
      // Each session takes a local port: stay well inside the ephemeral range.
      ok = parseInt(value, 1, 20000, &args->options.sessions);
    } else if (flag == "--threads") {
      ok = parseInt(value, 1, 64, &args->options.threads);
    } else if (flag == "--dir") {
      args->dir = value;
      ok = !args->dir.empty();
    } else if (flag == "--policy") {
      ok = std::strcmp(value, "drop") == 0 || std::strcmp(value, "block") == 0;
      if (ok && std::strcmp(value, "block") == 0) args->policy = muon::AsyncLogging::kBlock;
    } else {
      ok = false;
    }
    if (!ok) return false;
  }
  return true;
}

// Two descriptors per session (both ends are in this process): take the
// whole hard limit, and say so if even that is too few.
bool raiseFdLimit(int sessions) {
  const rlim_t limit = muon::examples::raiseFdLimit();
  const rlim_t need = 2 * static_cast<rlim_t>(sessions) + 100;
  if (limit < need) {
    std::fprintf(stderr, "soak: %d sessions need about %llu descriptors; RLIMIT_NOFILE is %llu\n",
                 sessions, static_cast<unsigned long long>(need),
                 static_cast<unsigned long long>(limit));
    return false;
  }
  return true;
}

// Files and all: the logs of a ten-minute run are hundreds of MiB.
void removeDirectory(const std::string& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        ::unlink((dir + "/" + e->d_name).c_str());
      }
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

// Prints the verdict line; true if flat.
bool verdict(const std::vector<soak::Sample>& samples, const muon::AsyncLogging::Stats& stats) {
  bool flat = !samples.empty();
  std::string text = "soak:";
  char part[256];

  if (samples.size() > 2) {
    const long base = samples[1].rssKib;
    long peak = 0;
    for (size_t i = 2; i < samples.size(); ++i) peak = std::max(peak, samples[i].rssKib);
    const double growth = static_cast<double>(peak - base) / static_cast<double>(base);
    flat = flat && growth <= kRssBound;
    std::snprintf(part, sizeof part,
                  " rss_kib %ld at minute 1, at most %ld after (%+.1f%%, bound +%.0f%%);", base,
                  peak, growth * 100, kRssBound * 100);
  } else {
    std::snprintf(part, sizeof part, " rss_kib %ld (no minute after the warm-up to compare);",
                  samples.empty() ? 0 : samples.back().rssKib);
  }
  text += part;

  int lo = -1, hi = -1;
  bool settled = true;
  for (const auto& s : samples) {
    lo = lo < 0 ? s.fds : std::min(lo, s.fds);
    hi = std::max(hi, s.fds);
    settled = settled && s.settled;
  }
  flat = flat && lo == hi && settled;
  if (lo == hi) {
    std::snprintf(part, sizeof part, " fds %d at every sample%s;", lo,
                  settled ? "" : " (UNSETTLED)");
  } else {
    std::snprintf(part, sizeof part, " fds %d to %d%s;", lo, hi, settled ? "" : " (UNSETTLED)");
  }
  text += part;

  // Bytes are compared only without drops: a drop writes its own notice.
  const uint64_t logged = soak::bytesLogged();
  const bool allWritten =
      stats.file.lostBytes == 0 && (stats.messagesDropped > 0 || stats.file.writtenBytes == logged);
  flat = flat && stats.messagesDropped == 0 && allWritten;
  std::snprintf(part, sizeof part, " dropped %llu; log bytes written %llu of %llu, lost %llu",
                static_cast<unsigned long long>(stats.messagesDropped),
                static_cast<unsigned long long>(stats.file.writtenBytes),
                static_cast<unsigned long long>(logged),
                static_cast<unsigned long long>(stats.file.lostBytes));
  text += part;

  std::printf("%s : %s\n", text.c_str(), flat ? "flat" : "NOT flat");
  std::fflush(stdout);
  return flat;
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  Args args;
  if (help || !parseArgs(argc, argv, &args)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s [--minutes M] [--sessions S] [--dir DIR] [--threads T] "
                 "[--policy drop|block]\n"
                 "  defaults: 10 minutes, 1000 sessions, a temporary directory (removed at the\n"
                 "  end), 1 I/O thread per side, drop. Exit 0 if RSS, fds and drops stay flat.\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  if (!raiseFdLimit(args.options.sessions)) return 1;

  const bool temporary = args.dir.empty();
  if (temporary) {
    char pattern[] = "/tmp/muon-soak.XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
      std::perror("soak: mkdtemp");
      return 1;
    }
    args.dir = pattern;
  } else if (::mkdir(args.dir.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "soak: cannot create %s: %s\n", args.dir.c_str(), std::strerror(errno));
    return 1;
  }
  std::printf("soak: %d minutes, %d sessions, %d+%d I/O threads, %s policy, logs in %s\n",
              args.options.minutes, args.options.sessions, args.options.threads,
              args.options.threads, args.policy == muon::AsyncLogging::kDrop ? "drop" : "block",
              args.dir.c_str());
  std::fflush(stdout);

  muon::AsyncLogging log(args.dir + "/soak", kRollSize, kFlushInterval, args.policy);
  log.start();
  soak::logThrough(&log);
  muon::Logger::setLogLevel(muon::Logger::INFO);  // whatever MUON_LOG_LEVEL says

  std::vector<soak::Sample> samples;
  {
    muon::net::EventLoop loop;
    soak::Soak run(&loop, args.options, &log);
    run.run();
    samples = run.samples();
  }  // every thread but the log's is joined here

  soak::logThrough(nullptr);
  log.stop();
  const bool flat = verdict(samples, log.stats());
  if (temporary) removeDirectory(args.dir);
  return flat ? 0 : 1;
}
