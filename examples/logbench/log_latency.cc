// log_latency: what one log call costs its caller, as a distribution.
//
//   log_latency [--bursts N] [--warmup N] [--quick] [--dir DIR] [--csv PATH]
//               [--only LOGGER[,LOGGER]] [--threads 1|2|1,2]
//               [--message short|int-int-double[,...]] [--count-only]
//
// For each logger (muon-async, muon-sync, spdlog-async, spdlog-sync) x
// message (short, int-int-double) x threads (1, 2), every measuring thread
// runs the burst harness (BurstHarness.h: bursts of 20 calls ~10 us apart,
// each call timed alone between two fenced counter reads); the samples of
// all threads are merged and their percentiles (nearest rank) printed in ns.
// Nothing is subtracted: the row "empty-pair" is the two reads with nothing
// between, measured the same way, which every sample carries; the row
// "counter-read" is one more counter read (rdtsc, unfenced) between them,
// the time stamp every logger here takes per call: the floor of a call.
//
// The loggers run at their defaults, each case with a fresh logger writing
// into a fresh directory under a temporary one (mkdtemp in --dir); after
// the case (untimed) the logger is stopped, its files are read back and
// their message lines counted against warm-up + measured calls of all
// threads. A case that lost lines is reported, and the exit status is 1:
// its figures do not describe a logger that kept every line.
//
// Output: a comment line (counter, scale, bursts, machine), then a markdown
// table on stdout; the same rows as CSV with --csv; progress on stderr.
// docs/logging-bench.md describes the method. Single-threaded but for the
// measuring threads each case starts and joins.
//
// --count-only times nothing: each measured call goes through the noipa
// function countedCall, so that callgrind counts the calls' instructions
// (valgrind --tool=callgrind --toggle-collect='*countedCall*'), and the
// empty pair and the counter read are not run. It prints how many calls
// went through countedCall; latency_bench.sh divides.
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "BurstHarness.h"
#include "CommandLine.h"
#include "RunFiles.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/base/SyncLogging.h"
#include "muon/base/TscClock.h"

namespace {

using burst::Message;

constexpr off_t kRollSize = 500 * 1000 * 1000;  // muduo's bench

const char* const kUsage =
    "usage: log_latency [--bursts N] [--warmup N] [--quick] [--dir DIR] [--csv PATH]\n"
    "                   [--only LOGGER[,LOGGER]] [--threads 1|2|1,2]\n"
    "                   [--message short|int-int-double[,...]] [--count-only]\n"
    "  LOGGER: muon-async, muon-sync, spdlog-async, spdlog-sync (empty-pair is always measured)\n"
    "  --count-only: no timing; the measured calls go through countedCall, for callgrind\n"
    "  defaults: --bursts 100000 --warmup 10000 (per thread), --dir /tmp, threads 1 and 2;\n"
    "  --quick: --bursts 10000 --warmup 1000\n";

const char* const kLoggers[] = {"muon-async", "muon-sync", "spdlog-async", "spdlog-sync"};

struct Options {
  burst::Plan plan;
  std::string dir = "/tmp";
  std::string csv;  // "" for none
  std::vector<std::string> loggers{std::begin(kLoggers), std::end(kLoggers)};
  std::vector<int> threads{1, 2};
  std::vector<Message> messages{Message::kShort, Message::kIntIntDouble};
};

// How counts become nanoseconds, and how that was found.
struct CounterScale {
  double nanosPerCount = 1.0;
  bool fromTscClock = false;  // else our own calibration (x86-64) or clock_gettime
  std::string how;
};

// Where the counter is available (an invariant TSC), TscClock calibrates it
// within its first kWarmupMs; wait for that (TscClock turns to the counter at
// a now() call). Otherwise measure the rate here against CLOCK_MONOTONIC.
CounterScale prepareCounter() {
  CounterScale scale;
#if defined(__x86_64__)
  for (int i = 0; i < 500 && muon::TscClock::counterAvailable() && !muon::TscClock::usingTsc(); ++i) {
    muon::TscClock::now();
    burst::sleepNanos(1000 * 1000);
  }
  muon::TscClock::now();
  if (muon::TscClock::usingTsc()) {
    scale.fromTscClock = true;
    scale.nanosPerCount = muon::TscClock::nanosPerCount();
    scale.how = "TSC (lfence; rdtsc; lfence), scaled by muon's TscClock";
    return scale;
  }
  scale.nanosPerCount = burst::calibrateCounter();
  scale.how =
      "TSC (lfence; rdtsc; lfence), scaled against CLOCK_MONOTONIC over 200 ms here (the "
      "kernel's clock source is not the TSC: readings on different CPUs may not agree)";
#else
  scale.how = "clock_gettime(CLOCK_MONOTONIC) (not x86-64: no TSC; each sample carries two clock calls)";
#endif
  return scale;
}

// ---- The loggers -----------------------------------------------------------

template <typename Run>
void measureMuon(Message message, Run run) {
  if (message == Message::kShort) {
    run([](uint64_t) { LOG_INFO << burst::kShortLiteral; });
  } else {
    run([](uint64_t seq) {
      const burst::IntIntDouble v(seq);
      LOG_INFO << "Logging int: " << v.i << ", int: " << v.j << ", double: " << v.d;
    });
  }
}

template <typename Run>
void measureSpdlog(spdlog::logger* logger, Message message, Run run) {
  if (message == Message::kShort) {
    run([logger](uint64_t) { logger->info(burst::kShortText); });
  } else {
    run([logger](uint64_t seq) {
      const burst::IntIntDouble v(seq);
      logger->info("Logging int: {}, int: {}, double: {}", v.i, v.j, v.d);
    });
  }
}

// One case: its logger made in `dir`, measured, stopped. Returns the number
// of lines the logger itself says it dropped (muon-async's count; else 0).
uint64_t runCase(const Options& options, const std::string& logger, Message message, int threads,
                 const std::string& dir, std::vector<burst::ThreadSamples>* samples) {
  auto run = [&](auto call) { burst::measure(options.plan, threads, call, samples); };
  const std::string base = dir + "/log_latency";
  if (logger == "muon-async") {
    muon::AsyncLogging asyncLogging(base, kRollSize);
    asyncLogging.start();
    auto attachment = muon::Logger::attach(asyncLogging);
    measureMuon(message, run);
    asyncLogging.stop();
    return asyncLogging.stats().messagesDropped;
  }
  if (logger == "muon-sync") {
    muon::SyncLogging syncLogging(base, kRollSize);
    auto attachment = muon::Logger::attach(syncLogging);
    measureMuon(message, run);
    return 0;  // the file is flushed and closed as syncLogging goes
  }
  if (logger == "spdlog-async") {
    auto log = spdlog::create_async<spdlog::sinks::basic_file_sink_mt>("log_latency", base + ".log", true);
    measureSpdlog(log.get(), message, run);
  } else {
    auto log = spdlog::basic_logger_mt("log_latency", base + ".log", true);
    measureSpdlog(log.get(), message, run);
  }
  // Drops the logger from the registry and destroys the async thread pool,
  // which writes every queued line first (each holds the logger, so the
  // file stays open until then); the next create_async makes a new pool.
  spdlog::shutdown();
  return 0;
}

struct Row {
  std::string logger, message;
  int threads = 0;
  uint64_t ns[burst::kColumns] = {};  // p50 p90 p99 p99.9 p99.99 max
  double burstMicros = 0;  // mean time from one burst's start to the next's
  int64_t lostLines = 0;
  uint64_t reportedDropped = 0;
};

// ---- The command line ------------------------------------------------------

[[noreturn]] void usage() {
  std::fputs(kUsage, stderr);
  std::exit(2);
}

Options parseOptions(int argc, char** argv) {
  Options options;
  bool burstsSet = false, warmupSet = false, quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    long n = 0;
    if (arg == "--bursts") {
      if (!muon::examples::parseInt(value(), 1, 100000000, &n)) usage();
      options.plan.bursts = n;
      burstsSet = true;
    } else if (arg == "--warmup") {
      if (!muon::examples::parseInt(value(), 0, 100000000, &n)) usage();
      options.plan.warmup = n;
      warmupSet = true;
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--dir") {
      options.dir = value();
    } else if (arg == "--csv") {
      options.csv = value();
    } else if (arg == "--only") {
      options.loggers.clear();
      for (const std::string& name : muon::examples::splitCommas(value())) {
        if (name == "empty-pair") continue;  // always measured
        if (std::find(std::begin(kLoggers), std::end(kLoggers), name) == std::end(kLoggers)) usage();
        if (std::find(options.loggers.begin(), options.loggers.end(), name) == options.loggers.end()) {
          options.loggers.push_back(name);
        }
      }
    } else if (arg == "--threads") {
      options.threads.clear();
      for (const std::string& t : muon::examples::splitCommas(value())) {
        if (!muon::examples::parseInt(t.c_str(), 1, burst::kMaxThreads, &n)) usage();
        if (std::find(options.threads.begin(), options.threads.end(), n) == options.threads.end()) {
          options.threads.push_back(static_cast<int>(n));
        }
      }
      std::sort(options.threads.begin(), options.threads.end());
    } else if (arg == "--message") {
      options.messages.clear();
      for (const std::string& name : muon::examples::splitCommas(value())) {
        Message m;
        if (!burst::parseMessage(name, &m)) usage();
        if (std::find(options.messages.begin(), options.messages.end(), m) == options.messages.end()) {
          options.messages.push_back(m);
        }
      }
    } else if (arg == "--count-only") {
      options.plan.countOnly = true;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      usage();
    }
  }
  if (quick) {
    if (!burstsSet) options.plan.bursts = 10000;
    if (!warmupSet) options.plan.warmup = 1000;
  }
  return options;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 10, "model name") == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parseOptions(argc, argv);
  muon::Logger::setLogLevel(muon::Logger::INFO);  // whatever MUON_LOG_LEVEL says
  CounterScale scale = prepareCounter();

  std::string top = options.dir + "/log_latency.XXXXXX";
  top = logbench::makeTempDir(top);

  std::vector<burst::ThreadSamples> samples = burst::makeSamples(options.plan);
  std::vector<uint64_t> merged;
  merged.reserve(static_cast<size_t>(options.plan.bursts) * burst::kBurstCalls * burst::kMaxThreads);

  const int cases = (options.plan.countOnly ? 0 : 2) +
                    static_cast<int>(options.loggers.size() * options.messages.size() * options.threads.size());
  std::vector<Row> rows;
  auto collect = [&](Row row, int threads) {
    // The latest calibration: TscClock's scale gets better as the process runs.
    if (scale.fromTscClock) scale.nanosPerCount = muon::TscClock::nanosPerCount();
    row.burstMicros = burst::percentiles(samples, threads, options.plan, scale.nanosPerCount, &merged, row.ns);
    rows.push_back(row);
    return &rows.back();
  };

  // The empty pair, at the first thread count asked for.
  int done = 0;
  if (!options.plan.countOnly) {
    const int threads = options.threads.front();
    const uint64_t start = burst::monotonicNanos();
    burst::measure(options.plan, threads, [](uint64_t) {}, &samples);
    Row row;
    row.logger = "empty-pair";
    row.message = "-";
    row.threads = threads;
    Row* r = collect(row, threads);
    std::fprintf(stderr, "[%d/%d] empty-pair, %d thread(s): %.1f s, %.1f us per burst\n", ++done, cases,
                 threads, static_cast<double>(burst::monotonicNanos() - start) / 1e9, r->burstMicros);
  }
  if (!options.plan.countOnly) {
    const int threads = options.threads.front();
    const uint64_t start = burst::monotonicNanos();
    burst::measure(options.plan, threads,
            [](uint64_t) {
              uint64_t count = muon::TscClock::readCounter();
              asm volatile("" : : "r"(count));
            },
            &samples);
    Row row;
    row.logger = "counter-read";
    row.message = "-";
    row.threads = threads;
    Row* r = collect(row, threads);
    std::fprintf(stderr, "[%d/%d] counter-read, %d thread(s): %.1f s, %.1f us per burst\n", ++done,
                 cases, threads, static_cast<double>(burst::monotonicNanos() - start) / 1e9, r->burstMicros);
  }

  // The loggers of one cell (message, threads) run back to back, so that a
  // change in the machine's load hits the figures compared in a row group alike.
  bool lost = false;
  for (Message message : options.messages) {
    for (int threads : options.threads) {
      for (const std::string& logger : options.loggers) {
        const std::string dir = top + "/" + logger + "-" + burst::messageName(message) + "-" + std::to_string(threads);
        if (::mkdir(dir.c_str(), 0700) != 0) {
          std::fprintf(stderr, "log_latency: cannot make %s: %s\n", dir.c_str(), std::strerror(errno));
          return 1;
        }
        const uint64_t start = burst::monotonicNanos();
        Row row;
        row.logger = logger;
        row.message = burst::messageName(message);
        row.threads = threads;
        row.reportedDropped = runCase(options, logger, message, threads, dir, &samples);
        const double seconds = static_cast<double>(burst::monotonicNanos() - start) / 1e9;

        const uint64_t expected =
            burst::callsPerThread(options.plan) * static_cast<uint64_t>(threads);
        uint64_t bytes = 0, lines = 0;
        if (!logbench::scanLogFiles(dir, burst::messageMarker(message), nullptr, &bytes, &lines)) return 1;
        row.lostLines = static_cast<int64_t>(expected) - static_cast<int64_t>(lines);
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);

        Row* r = collect(row, threads);
        std::fprintf(stderr, "[%d/%d] %s, %s, %d thread(s): %.1f s, %.1f us per burst, %llu lines", ++done, cases,
                     logger.c_str(), burst::messageName(message), threads, seconds, r->burstMicros,
                     static_cast<unsigned long long>(lines));
        if (r->lostLines != 0) {
          lost = true;
          std::fprintf(stderr, ", %lld LOST of %llu (the logger reports %llu dropped)",
                       static_cast<long long>(r->lostLines), static_cast<unsigned long long>(expected),
                       static_cast<unsigned long long>(r->reportedDropped));
        }
        std::fputc('\n', stderr);
      }
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(top, ec);

  // Rows logger by logger, in the order of kLoggers, the empty pair first.
  auto order = [](const std::string& logger) {
    for (int i = 0; i < 4; ++i) {
      if (logger == kLoggers[i]) return i + 1;
    }
    return 0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (order(a.logger) != order(b.logger)) return order(a.logger) < order(b.logger);
    if (a.message != b.message) return a.message == "short";
    return a.threads < b.threads;
  });

  if (options.plan.countOnly) {
    uint64_t calls = 0;
    for (const Row& r : rows) calls += static_cast<uint64_t>(options.plan.bursts) * burst::kBurstCalls * static_cast<uint64_t>(r.threads);
    std::printf("# log_latency --count-only: %llu calls through countedCall\n", static_cast<unsigned long long>(calls));
    return lost ? 1 : 0;
  }
  std::printf("# log_latency: %s, %.4f ns per count; %ld measured bursts of %d calls after %ld warm-up bursts "
              "per thread, a %ld us sleep between bursts (timer slack %lu ns; the empty pair's bursts took "
              "%.1f us apart); %s, %ld CPUs\n",
              scale.how.c_str(), scale.nanosPerCount, options.plan.bursts, burst::kBurstCalls, options.plan.warmup,
              burst::kSleepNanos / 1000, burst::kTimerSlackNanos, rows.front().burstMicros, cpuModel().c_str(),
              ::sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("\n| logger | message | threads | p50 | p90 | p99 | p99.9 | p99.99 | max |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %d |", r.logger.c_str(), r.message.c_str(), r.threads);
    for (uint64_t v : r.ns) std::printf(" %llu |", static_cast<unsigned long long>(v));
    std::printf("\n");
  }
  for (const Row& r : rows) {
    if (r.lostLines == 0) continue;
    std::printf("\n%s, %s, %d thread(s): %lld lines lost (the logger reports %llu dropped): its figures do "
                "not describe a logger that kept every line.\n",
                r.logger.c_str(), r.message.c_str(), r.threads, static_cast<long long>(r.lostLines),
                static_cast<unsigned long long>(r.reportedDropped));
  }
  std::fflush(stdout);

  if (!options.csv.empty()) {
    FILE* f = std::fopen(options.csv.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "log_latency: cannot write %s: %s\n", options.csv.c_str(), std::strerror(errno));
      return 1;
    }
    std::fprintf(f, "logger,message,threads,p50,p90,p99,p99_9,p99_99,max\n");
    for (const Row& r : rows) {
      std::fprintf(f, "%s,%s,%d", r.logger.c_str(), r.message.c_str(), r.threads);
      for (uint64_t v : r.ns) std::fprintf(f, ",%llu", static_cast<unsigned long long>(v));
      std::fprintf(f, "\n");
    }
    if (std::fclose(f) != 0) {
      std::fprintf(stderr, "log_latency: cannot write %s: %s\n", options.csv.c_str(), std::strerror(errno));
      return 1;
    }
  }
  return lost ? 1 : 0;
}
