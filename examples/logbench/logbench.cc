// logbench: one workload, several loggers, muduo's summary line.
//
//   logbench --logger muon|muon-sync|spdlog-async|spdlog-sync|glog|floor [--size short|long|int-int-double]
//            [--threads T] [--messages N] [--policy drop|block] [--latency]
//            [--crash-safe] [--compress zstd] [--key-file FILE] [--roll-size BYTES]
//            [--max-files N] [--format text|json|logfmt] [--fields N] [--dir DIR] [--repeat R] [--keep]
//
// T threads log N messages between them (muduo's bench message; the counter
// is the message's global index, so every line is distinct). A run is timed
// from the moment the threads are released until the logger reports every
// line in its file(s); then the files are read back and the lines counted.
// docs/logging-bench.md explains each output line.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "Backend.h"
#include "RunFiles.h"
#include "muon/base/filestages/AesGcmStage.h"
#include "muon/base/filestages/LogReader.h"

namespace fs = std::filesystem;

namespace logbench {
namespace {

constexpr int kUsageExit = 2;
constexpr const char* kProducerThreadName = "logbench-prod";
constexpr size_t kLongExtra = 3000;  // 'X's in a long message: ~3 KB lines

struct Options {
  std::string logger = "muon";
  bool longMessages = false;
  bool numbers = false;  // --size int-int-double
  int threads = 1;
  uint64_t messages = 1000000;
  MuonOptions muon;       // --policy, --crash-safe, --compress, --key-file, --roll-size, --max-files
  bool muonOnlyGiven = false;  // one of those was given
  std::string muonOnlyFlag;
  bool latency = false;
  muon::AesKey key;  // loaded from --key-file, to read the files back
  std::string dir;  // empty: a fresh directory under /tmp, removed at exit
  int repeat = 1;
  bool keep = false;
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: logbench [--logger muon|muon-sync|spdlog-async|spdlog-sync|glog|floor]\n"
               "                [--size short|long|int-int-double] [--threads T] [--messages N]\n"
               "                [--policy drop|block] [--latency]\n"
               "                [--crash-safe] [--compress zstd] [--key-file FILE] [--roll-size BYTES]\n"
               "                [--max-files N] [--format text|json|logfmt] [--fields N]\n"
               "                [--dir DIR] [--repeat R] [--keep]\n"
               "  --logger    logger to measure (default muon); floor: no logger, only the\n"
               "              copy and write(2) every logger must do (FloorBackend.cc)\n"
               "  --size      short: ~110-byte lines; long: ~3 KB lines; int-int-double:\n"
               "              \"Logging int: i, int: j, double: d\" (muon, muon-sync, spdlog; default short)\n"
               "  --threads   producer threads, 1..256; N is split evenly (default 1)\n"
               "  --messages  messages per run, all threads together (default 1000000)\n"
               "  --policy    muon only: what AsyncLogging does when its queue is full\n"
               "              (default block; drop is AsyncLogging's own default)\n"
               "  --latency   time every call and print percentiles\n"
               "  --crash-safe muon only: AsyncLogging's crash-safe mode (buffers in a spool file)\n"
               "  --compress zstd   muon only: one zstd frame per buffer (.zst files)\n"
               "  --key-file FILE   muon only: AES-256-GCM records with this key (.enc files)\n"
               "  --roll-size BYTES muon only: roll files at this size (default 500000000)\n"
               "  --max-files N     muon only: keep at most N files (retention)\n"
               "  --format text|json|logfmt muon, muon-sync: the files' line format (default text)\n"
               "  --fields N  muon, muon-sync: N key-value fields per line (muon::kv): a\n"
               "              string, an integer and a floating-point value, repeating (default 0)\n"
               "  --dir DIR   each run writes into a fresh subdirectory of DIR\n"
               "              (default: a temporary directory under /tmp)\n"
               "  --repeat R  runs, 1..100; with R > 1 a median line follows (default 1)\n"
               "  --keep      keep the log files (their directories go to stderr)\n");
}

[[noreturn]] void badUsage(const std::string& why) {
  std::fprintf(stderr, "logbench: %s\n", why.c_str());
  usage(stderr);
  std::exit(kUsageExit);
}

uint64_t parseCount(const char* flag, const char* text, uint64_t min, uint64_t max) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (text[0] == '\0' || text[0] == '-' || *end != '\0' || errno != 0 || v < min || v > max) {
    std::fprintf(stderr, "logbench: %s wants a whole number in %llu..%llu, not '%s'\n", flag,
                 static_cast<unsigned long long>(min), static_cast<unsigned long long>(max), text);
    usage(stderr);
    std::exit(kUsageExit);
  }
  return v;
}

Options parseOptions(int argc, char** argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(0);
    }
    if (arg == "--latency") {
      opts.latency = true;
      continue;
    }
    if (arg == "--crash-safe") {
      opts.muon.crashSafe = true;
      opts.muonOnlyGiven = true;
      opts.muonOnlyFlag = arg;
      continue;
    }
    if (arg == "--keep") {
      opts.keep = true;
      continue;
    }
    // Every other flag takes a value, as "--flag value" or "--flag=value".
    std::string value;
    size_t eq = arg.find('=');
    bool inlineValue = arg.compare(0, 2, "--") == 0 && eq != std::string::npos;
    if (inlineValue) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    static const char* const kValueFlags[] = {
        "--logger", "--size",     "--threads",   "--messages",  "--policy", "--dir",
        "--repeat", "--compress", "--key-file",  "--roll-size", "--max-files", "--format",
        "--fields"};
    if (std::find(std::begin(kValueFlags), std::end(kValueFlags), arg) == std::end(kValueFlags)) {
      badUsage("unknown flag '" + arg + "'");
    }
    if (!inlineValue) {
      if (i + 1 >= argc) badUsage(arg + " needs a value");
      value = argv[++i];
    }
    if (arg == "--logger") {
      if (value != "muon" && value != "muon-sync" && value != "spdlog-async" &&
          value != "spdlog-sync" && value != "glog" && value != "floor") {
        badUsage("unknown logger '" + value + "'");
      }
      opts.logger = value;
    } else if (arg == "--size") {
      if (value != "short" && value != "long" && value != "int-int-double") {
        badUsage("--size is short, long or int-int-double, not '" + value + "'");
      }
      opts.longMessages = value == "long";
      opts.numbers = value == "int-int-double";
    } else if (arg == "--threads") {
      opts.threads = static_cast<int>(parseCount("--threads", value.c_str(), 1, 256));
    } else if (arg == "--messages") {
      opts.messages = parseCount("--messages", value.c_str(), 1, uint64_t{1} << 40);
    } else if (arg == "--policy") {
      if (value != "drop" && value != "block") badUsage("--policy is drop or block, not '" + value + "'");
      opts.muon.policy = value == "drop" ? MuonPolicy::kDrop : MuonPolicy::kBlock;
    } else if (arg == "--compress") {
      if (value != "zstd") badUsage("--compress is zstd, not '" + value + "'");
      opts.muon.zstd = true;
    } else if (arg == "--key-file") {
      if (value.empty()) badUsage("--key-file needs a file");
      opts.muon.keyFile = value;
    } else if (arg == "--roll-size") {
      opts.muon.rollSize = static_cast<off_t>(parseCount("--roll-size", value.c_str(), 1, uint64_t{1} << 50));
    } else if (arg == "--format") {
      if (value != "text" && value != "json" && value != "logfmt") {
        badUsage("--format is text, json or logfmt, not '" + value + "'");
      }
      opts.muon.format = value == "json"     ? muon::LineFormat::kJson
                         : value == "logfmt" ? muon::LineFormat::kLogfmt
                                             : muon::LineFormat::kText;
    } else if (arg == "--fields") {
      opts.muon.fields = static_cast<int>(parseCount("--fields", value.c_str(), 0, 64));
    } else if (arg == "--max-files") {
      opts.muon.maxFiles = static_cast<size_t>(parseCount("--max-files", value.c_str(), 1, 1000000));
    } else if (arg == "--dir") {
      if (value.empty()) badUsage("--dir needs a directory");
      opts.dir = value;
    } else if (arg == "--repeat") {
      opts.repeat = static_cast<int>(parseCount("--repeat", value.c_str(), 1, 100));
    } else {
      badUsage("unknown flag '" + arg + "'");
    }
    if (arg == "--policy" || arg == "--compress" || arg == "--key-file" || arg == "--roll-size" ||
        arg == "--max-files") {
      opts.muonOnlyGiven = true;
      opts.muonOnlyFlag = arg;
    }
  }
  if ((opts.muon.format != muon::LineFormat::kText || opts.muon.fields > 0) && opts.logger != "muon" && opts.logger != "muon-sync") {
    badUsage("--format and --fields apply to --logger muon and muon-sync only, not " + opts.logger);
  }
  if (opts.muonOnlyGiven && opts.logger != "muon") {
    badUsage(opts.muonOnlyFlag + " applies to --logger muon only, not " + opts.logger);
  }
  if (!opts.muon.keyFile.empty()) {
    std::string error;
    if (!muon::loadAesKey(opts.muon.keyFile, &opts.key, &error)) {
      std::fprintf(stderr, "logbench: %s\n", error.c_str());
      std::exit(1);
    }
  }
  return opts;
}

struct Latency {
  long long p50 = 0, p99 = 0, p999 = 0, p9999 = 0, max = 0;
};

struct RunResult {
  double seconds = 0;
  uint64_t bytes = 0;
  double msgPerSecond = 0;
  double mibPerSecond = 0;
  uint64_t written = 0;
  uint64_t dropped = 0;
  uint64_t lines = 0;
  double systemSeconds = 0;     // the process's system CPU in the timed part
  uint64_t spoolDiskBytes = 0;  // muon --crash-safe: the spool's blocks at the end
  Latency latency;
};

double systemCpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
}

// Nearest-rank percentile of sorted TscClock counts, in nanoseconds.
long long percentileNs(const std::vector<uint64_t>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  size_t index = rank == 0 ? 0 : std::min(rank, sorted.size()) - 1;
  return std::llround(static_cast<double>(sorted[index]) * muon::TscClock::nanosPerCount());
}

// Latency samples are TscClock::counts() differences, which compare only
// once TscClock has chosen its source: run it past its warm-up first.
void settleLatencyClock() {
  auto end = std::chrono::steady_clock::now() +
             std::chrono::milliseconds(2 * muon::TscClock::kWarmupMs);
  while (std::chrono::steady_clock::now() < end) muon::TscClock::now();
}

// Median of back-to-back counts() pairs, in nanoseconds: what every latency
// sample carries on top of the log call itself.
double latencyClockOverheadNs() {
  constexpr size_t kPairs = 100000;
  std::vector<uint64_t> gaps(kPairs);
  for (uint64_t& gap : gaps) {
    uint64_t t0 = muon::TscClock::counts();
    gap = muon::TscClock::counts() - t0;
  }
  std::nth_element(gaps.begin(), gaps.begin() + kPairs / 2, gaps.end());
  return static_cast<double>(gaps[kPairs / 2]) * muon::TscClock::nanosPerCount();
}

std::string extraOf(const Options& opts) {
  return opts.longMessages ? std::string(kLongExtra, 'X') + " " : " ";
}

// Messages begin..end of the run's workload, logged by the calling thread.
void produceRange(Backend& backend, const Options& opts, const std::string& extra, uint64_t begin,
                  uint64_t end, uint64_t* samples) {
  if (!opts.numbers) {
    backend.produce(begin, end, extra, samples);
  } else if (!backend.produceNumbers(begin, end, samples)) {
    std::fprintf(stderr, "logbench: --size int-int-double: not for %s\n", backend.name());
    std::exit(2);
  }
}

// Messages in the sizing run (warmUpBytes).
constexpr uint64_t kSizingMessages = 20000;

// About the bytes one run writes, which its warm-up writes first: those of
// a short run of the last messages of the workload through the same logger
// (its files deleted), scaled to the run's messages. A line's size depends
// on the logger, the format, the fields and the stages, so no fixed guess
// fits them all, and a warm-up smaller than the run leaves the run's tail
// in the slow memory the warm-up is there to avoid.
uint64_t warmUpBytes(Backend& backend, const Options& opts, const std::string& parent) {
  const uint64_t n = std::min(opts.messages, kSizingMessages);
  if (n == 0) return 0;
  const std::string dir = makeTempDir(parent + "/" + opts.logger + "-sizing.XXXXXX");
  backend.open(dir);
  produceRange(backend, opts, extraOf(opts), opts.messages - n, opts.messages, nullptr);
  backend.finish();
  backend.close();
  uint64_t bytes = 0;
  uint64_t lines = 0;
  if (!scanLogFiles(dir, kHello, opts.muon.keyFile.empty() ? nullptr : &opts.key, &bytes, &lines)) {
    std::exit(1);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return bytes * opts.messages / n;
}

RunResult runOnce(Backend& backend, const Options& opts, const std::string& runDir,
                  uint64_t warmUpSize) {
  const std::string extra = extraOf(opts);
  const uint64_t n = opts.messages;
  const auto threads = static_cast<uint64_t>(opts.threads);

  // One slot per message, written before the clock starts so that page
  // faults on first touch do not land in the samples.
  std::vector<uint64_t> samples(opts.latency ? n : 0);

  warmUp(runDir, warmUpSize);
  backend.open(runDir);

  std::mutex mutex;
  std::condition_variable cond;
  uint64_t ready = 0;
  bool go = false;
  std::vector<std::thread> producers;
  producers.reserve(threads);
  uint64_t begin = 0;
  for (uint64_t k = 0; k < threads; ++k) {
    uint64_t count = n / threads + (k < n % threads ? 1 : 0);
    uint64_t end = begin + count;
    uint64_t* slot = opts.latency ? samples.data() + begin : nullptr;
    producers.emplace_back([&, begin, end, slot] {
      // Named, so that a profile can tell the producers from the main
      // thread's warm-up and read-back (./build.sh profile).
      ::prctl(PR_SET_NAME, kProducerThreadName);
      {
        std::unique_lock<std::mutex> lock(mutex);
        ++ready;
        cond.notify_all();
        cond.wait(lock, [&] { return go; });
      }
      produceRange(backend, opts, extra, begin, end, slot);
    });
    begin = end;
  }

  std::chrono::steady_clock::time_point start;
  double systemBefore = systemCpuSeconds();
  {
    std::unique_lock<std::mutex> lock(mutex);
    cond.wait(lock, [&] { return ready == threads; });
    start = std::chrono::steady_clock::now();
    go = true;
    cond.notify_all();
  }
  for (std::thread& t : producers) t.join();
  backend.finish();
  auto stop = std::chrono::steady_clock::now();

  RunResult r;
  r.systemSeconds = systemCpuSeconds() - systemBefore;
  r.spoolDiskBytes = backend.spoolDiskBytes();
  r.seconds = std::chrono::duration<double>(stop - start).count();
  r.dropped = backend.dropped();
  r.written = n >= r.dropped ? n - r.dropped : 0;
  backend.close();

  if (!scanLogFiles(runDir, kHello, opts.muon.keyFile.empty() ? nullptr : &opts.key, &r.bytes, &r.lines)) {
    std::exit(1);
  }
  r.msgPerSecond = static_cast<double>(n) / r.seconds;
  r.mibPerSecond = static_cast<double>(r.bytes) / r.seconds / (1024.0 * 1024.0);

  if (opts.latency) {
    std::sort(samples.begin(), samples.end());
    r.latency.p50 = percentileNs(samples, 0.50);
    r.latency.p99 = percentileNs(samples, 0.99);
    r.latency.p999 = percentileNs(samples, 0.999);
    r.latency.p9999 = percentileNs(samples, 0.9999);
    r.latency.max = percentileNs(samples, 1.0);
  }
  return r;
}

void printRun(const char* name, const RunResult& r, bool latency) {
  std::printf("%12s: %f seconds, %lu bytes, %10.2f msg/s, %.2f MiB/s\n", name, r.seconds,
              static_cast<unsigned long>(r.bytes), r.msgPerSecond, r.mibPerSecond);
  std::printf("written %llu dropped %llu lines %llu\n", static_cast<unsigned long long>(r.written),
              static_cast<unsigned long long>(r.dropped), static_cast<unsigned long long>(r.lines));
  if (latency) {
    std::printf("latency_ns p50 %lld p99 %lld p99.9 %lld p99.99 %lld max %lld\n", r.latency.p50,
                r.latency.p99, r.latency.p999, r.latency.p9999, r.latency.max);
  }
  std::fflush(stdout);
}

// Median of one field over the runs; with an even count, the mean of the middle two.
template <typename T, typename Field>
T medianOf(const std::vector<RunResult>& runs, Field field) {
  std::vector<T> v;
  v.reserve(runs.size());
  for (const RunResult& r : runs) v.push_back(static_cast<T>(field(r)));
  std::sort(v.begin(), v.end());
  size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : static_cast<T>((v[mid - 1] + v[mid]) / 2);
}

RunResult medianRun(const std::vector<RunResult>& runs) {
  RunResult m;
  m.seconds = medianOf<double>(runs, [](const RunResult& r) { return r.seconds; });
  m.bytes = medianOf<uint64_t>(runs, [](const RunResult& r) { return r.bytes; });
  m.msgPerSecond = medianOf<double>(runs, [](const RunResult& r) { return r.msgPerSecond; });
  m.mibPerSecond = medianOf<double>(runs, [](const RunResult& r) { return r.mibPerSecond; });
  m.written = medianOf<uint64_t>(runs, [](const RunResult& r) { return r.written; });
  m.dropped = medianOf<uint64_t>(runs, [](const RunResult& r) { return r.dropped; });
  m.lines = medianOf<uint64_t>(runs, [](const RunResult& r) { return r.lines; });
  m.latency.p50 = medianOf<long long>(runs, [](const RunResult& r) { return r.latency.p50; });
  m.latency.p99 = medianOf<long long>(runs, [](const RunResult& r) { return r.latency.p99; });
  m.latency.p999 = medianOf<long long>(runs, [](const RunResult& r) { return r.latency.p999; });
  m.latency.p9999 = medianOf<long long>(runs, [](const RunResult& r) { return r.latency.p9999; });
  m.latency.max = medianOf<long long>(runs, [](const RunResult& r) { return r.latency.max; });
  return m;
}

std::unique_ptr<Backend> makeBackend(const Options& opts, const char* argv0) {
  if (opts.logger == "muon") return makeMuonBackend(opts.muon);
  if (opts.logger == "spdlog-async") return makeSpdlogAsyncBackend();
  if (opts.logger == "muon-sync") return makeMuonSyncBackend(opts.muon);
  if (opts.logger == "spdlog-sync") return makeSpdlogSyncBackend();
  if (opts.logger == "floor") return makeFloorBackend();
  return makeGlogBackend(argv0);
}

int run(int argc, char** argv) {
  const Options opts = parseOptions(argc, argv);

  std::string parent = opts.dir;
  bool ownParent = false;
  if (parent.empty()) {
    parent = makeTempDir("/tmp/logbench.XXXXXX");
    ownParent = true;
  } else {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) {
      std::fprintf(stderr, "logbench: cannot create %s: %s\n", parent.c_str(), ec.message().c_str());
      return 1;
    }
  }

  std::printf("# logbench logger %s size %s threads %d messages %llu%s repeat %d\n",
              opts.logger.c_str(), opts.longMessages ? "long" : (opts.numbers ? "int-int-double" : "short"), opts.threads,
              static_cast<unsigned long long>(opts.messages),
              opts.logger != "muon" ? ""
              : opts.muon.policy == MuonPolicy::kBlock ? " policy block"
                                                       : " policy drop",
              opts.repeat);
  if (opts.muon.crashSafe) std::printf("# crash-safe: buffers in a spool file beside the log\n");
  if (opts.muon.zstd || !opts.muon.keyFile.empty()) {
    std::printf("# file stages:%s%s (bytes are on disk)\n", opts.muon.zstd ? " zstd" : "",
                opts.muon.keyFile.empty() ? "" : " aes-256-gcm");
  }
  if (opts.latency) {
    settleLatencyClock();
    std::printf("# latency clock %s, %.1f ns per reading pair (included in every sample)\n",
                muon::TscClock::usingTsc() ? "rdtsc" : "clock_gettime(CLOCK_MONOTONIC)",
                latencyClockOverheadNs());
  }
  std::fflush(stdout);

  std::unique_ptr<Backend> backend = makeBackend(opts, argv[0]);
  const uint64_t warmUpSize = warmUpBytes(*backend, opts, parent);
  std::printf("# warm-up: %llu MB written and deleted before each run\n",
              static_cast<unsigned long long>(warmUpSize / 1000000));
  std::fflush(stdout);
  std::vector<RunResult> runs;
  for (int i = 0; i < opts.repeat; ++i) {
    std::string runDir = makeTempDir(parent + "/" + opts.logger + ".XXXXXX");
    RunResult r = runOnce(*backend, opts, runDir, warmUpSize);
    printRun(backend->name(), r, opts.latency);
    if (r.lines != r.written) {
      std::fprintf(stderr, "logbench: %s reports %llu messages written but %llu are in %s\n",
                   backend->name(), static_cast<unsigned long long>(r.written),
                   static_cast<unsigned long long>(r.lines), runDir.c_str());
    }
    if (opts.keep) {
      std::fprintf(stderr, "logbench: kept %s\n", runDir.c_str());
    } else {
      std::error_code ec;
      fs::remove_all(runDir, ec);
      if (ec) std::fprintf(stderr, "logbench: cannot remove %s: %s\n", runDir.c_str(), ec.message().c_str());
    }
    runs.push_back(r);
  }
  if (opts.repeat > 1) printRun("median", medianRun(runs), opts.latency);
  backend.reset();

  if (ownParent && !opts.keep) {
    std::error_code ec;
    fs::remove_all(parent, ec);
  }

  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  // System CPU of the timed parts, per GiB of log written.
  uint64_t logged = 0, spool = 0;
  double systemSeconds = 0;
  for (const RunResult& r : runs) {
    logged += r.bytes;
    spool = std::max(spool, r.spoolDiskBytes);
    systemSeconds += r.systemSeconds;
  }
  std::printf("system_cpu_seconds %.3f per_gib_logged %.3f\n", systemSeconds,
              logged > 0 ? systemSeconds / (static_cast<double>(logged) / (1u << 30)) : 0.0);
  if (opts.muon.crashSafe) {
    std::printf("spool_disk_bytes %llu\n", static_cast<unsigned long long>(spool));
  }
  std::printf("peak_rss_kib %ld\n", ru.ru_maxrss);
  return 0;
}

}  // namespace
}  // namespace logbench

int main(int argc, char** argv) { return logbench::run(argc, argv); }
