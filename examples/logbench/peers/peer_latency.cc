// peer_latency: log_latency's measurement for a peer whose sources are not
// in this repository (Quill or fmtlog), built by examples/bench/peers_latency.sh
// with -DPEER_QUILL or -DPEER_FMTLOG against a checkout the user names.
//
//   quill_latency|fmtlog_latency [--bursts N] [--warmup N] [--dir DIR] [--csv PATH]
//                                [--threads 1|2|1,2] [--message short|int-int-double[,...]]
//
// The same burst harness as log_latency (BurstHarness.h), the same two
// statements (the peers' with {} where muon streams), the peer at its
// defaults writing one file per case under a fresh directory in DIR; after
// the case (untimed) the peer drains, the file's message lines are counted
// against the calls made, and a case that lost lines makes the exit status 1.
// Output: log_latency's comment line and table (rows of this peer only).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "BurstHarness.h"
#include "CommandLine.h"

#if defined(PEER_QUILL)
#include "quill/Backend.h"
#include "quill/Frontend.h"
#include "quill/LogMacros.h"
#include "quill/Logger.h"
#include "quill/sinks/FileSink.h"
constexpr const char* kPeer = "quill";
#elif defined(PEER_FMTLOG)
#define FMTLOG_HEADER_ONLY
#include "fmtlog.h"
constexpr const char* kPeer = "fmtlog";
#else
#error "build with -DPEER_QUILL or -DPEER_FMTLOG (examples/bench/peers_latency.sh)"
#endif

namespace {

using burst::Message;

const char* const kUsage =
    "usage: %s_latency [--bursts N] [--warmup N] [--dir DIR] [--csv PATH]\n"
    "       [--threads 1|2|1,2] [--message short|int-int-double[,...]]\n"
    "  defaults: --bursts 100000 --warmup 10000 (per thread), --dir /tmp, threads 1 and 2,\n"
    "  both messages\n";

struct Options {
  burst::Plan plan;
  std::string dir = "/tmp";
  std::string csv;
  std::vector<int> threads{1, 2};
  std::vector<Message> messages{Message::kShort, Message::kIntIntDouble};
};

[[noreturn]] void usage(FILE* to, int status) {
  std::fprintf(to, kUsage, kPeer);
  std::exit(status);
}

Options parseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(stderr, 2);
      return argv[++i];
    };
    long n = 0;
    if (arg == "--bursts" || arg == "--warmup") {
      if (!muon::examples::parseInt(value().c_str(), arg == "--bursts" ? 1 : 0, 100000000, &n)) usage(stderr, 2);
      (arg == "--bursts" ? options.plan.bursts : options.plan.warmup) = n;
    } else if (arg == "--dir") {
      options.dir = value();
    } else if (arg == "--csv") {
      options.csv = value();
    } else if (arg == "--threads") {
      options.threads.clear();
      for (const std::string& t : muon::examples::splitCommas(value())) {
        if (!muon::examples::parseInt(t.c_str(), 1, burst::kMaxThreads, &n)) usage(stderr, 2);
        options.threads.push_back(static_cast<int>(n));
      }
    } else if (arg == "--message") {
      options.messages.clear();
      for (const std::string& name : muon::examples::splitCommas(value())) {
        Message m;
        if (!burst::parseMessage(name, &m)) usage(stderr, 2);
        options.messages.push_back(m);
      }
    } else if (arg == "-h" || arg == "--help") {
      usage(stdout, 0);
    } else {
      usage(stderr, 2);
    }
  }
  return options;
}

// Lines of `path` holding `marker`.
uint64_t countLines(const std::string& path, const char* marker) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s_latency: cannot read %s\n", kPeer, path.c_str());
    std::exit(1);
  }
  uint64_t lines = 0;
  for (std::string line; std::getline(in, line);) lines += line.find(marker) != std::string::npos;
  return lines;
}

// One case: the peer writing `path`, measured by the harness, drained.
// Returns the lines it wrote beyond the harness's calls.
#if defined(PEER_QUILL)
int runCase(const burst::Plan& plan, Message message, int threads, const std::string& path,
             std::vector<burst::ThreadSamples>* samples) {
  quill::FileSinkConfig config;
  config.set_open_mode('w');
  auto sink = quill::Frontend::create_or_get_sink<quill::FileSink>(path, config);
  quill::Logger* logger = quill::Frontend::create_or_get_logger(path, std::move(sink));
  if (message == Message::kShort) {
    burst::measure(plan, threads, [logger](uint64_t) { LOG_INFO(logger, "Hello 0123456789 abcdefghijklmnopqrstuvwxyz"); },
                   samples);
  } else {
    burst::measure(plan, threads,
                   [logger](uint64_t seq) {
                     const burst::IntIntDouble v(seq);
                     LOG_INFO(logger, "Logging int: {}, int: {}, double: {}", v.i, v.j, v.d);
                   },
                   samples);
  }
  logger->flush_log();
  quill::Frontend::remove_logger_blocking(logger);
  return 0;
}
#else
// fmtlog registers a statement on its first call, which two threads making
// it at once can garble (its backend then reads a bad pointer): the main
// thread makes the first call, one more line.
template <typename Call>
int measureOnceRegistered(const burst::Plan& plan, int threads, Call call, std::vector<burst::ThreadSamples>* samples) {
  call(0);
  burst::measure(plan, threads, call, samples);
  return 1;
}

int runCase(const burst::Plan& plan, Message message, int threads, const std::string& path,
            std::vector<burst::ThreadSamples>* samples) {
  fmtlog::setLogFile(path.c_str(), true);
  fmtlog::startPollingThread(1);  // poll without pause, as Quill's backend does when busy
  int extra;
  if (message == Message::kShort) {
    extra = measureOnceRegistered(plan, threads, [](uint64_t) { logi("Hello 0123456789 abcdefghijklmnopqrstuvwxyz"); },
                                  samples);
  } else {
    extra = measureOnceRegistered(plan, threads,
                                  [](uint64_t seq) {
                                    const burst::IntIntDouble v(seq);
                                    logi("Logging int: {}, int: {}, double: {}", v.i, v.j, v.d);
                                  },
                                  samples);
  }
  fmtlog::stopPollingThread();  // its last poll writes what is left
  fmtlog::closeLogFile();
  return extra;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const Options options = parseOptions(argc, argv);
  const double nanosPerCount = burst::calibrateCounter();
#if defined(PEER_QUILL)
  quill::Backend::start();
#endif
  std::string top = options.dir + "/" + kPeer + "_latency.XXXXXX";
  if (::mkdtemp(&top[0]) == nullptr) {
    std::fprintf(stderr, "%s_latency: cannot make a directory in %s: %s\n", kPeer, options.dir.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::vector<burst::ThreadSamples> samples = burst::makeSamples(options.plan);
  std::vector<uint64_t> merged;
  std::string table, csv = "logger,message,threads,p50,p90,p99,p99_9,p99_99,max\n";
  bool lost = false;
  for (Message message : options.messages) {
    for (int threads : options.threads) {
      const std::string path = top + "/" + burst::messageName(message) + "-" + std::to_string(threads) + ".log";
      const int extra = runCase(options.plan, message, threads, path, &samples);
      const uint64_t expected =
          burst::callsPerThread(options.plan) * static_cast<uint64_t>(threads) + static_cast<uint64_t>(extra);
      const uint64_t lines = countLines(path, burst::messageMarker(message));
      std::remove(path.c_str());
      uint64_t ns[burst::kColumns];
      const double burstMicros = burst::percentiles(samples, threads, options.plan, nanosPerCount, &merged, ns);
      std::fprintf(stderr, "%s, %s, %d thread(s): %.1f us per burst, %llu lines", kPeer,
                   burst::messageName(message), threads, burstMicros, static_cast<unsigned long long>(lines));
      if (lines != expected) {
        lost = true;
        std::fprintf(stderr, ", %s: %llu expected", lines < expected ? "LOST LINES" : "EXTRA LINES",
                     static_cast<unsigned long long>(expected));
      }
      std::fputc('\n', stderr);
      std::string row = std::string("| ") + kPeer + " | " + burst::messageName(message) + " | " +
                        std::to_string(threads) + " |";
      std::string csvRow = std::string(kPeer) + "," + burst::messageName(message) + "," + std::to_string(threads);
      for (uint64_t v : ns) {
        row += " " + std::to_string(v) + " |";
        csvRow += "," + std::to_string(v);
      }
      table += row + "\n";
      csv += csvRow + "\n";
    }
  }
  ::rmdir(top.c_str());
#if defined(PEER_QUILL)
  quill::Backend::stop();
#endif
  std::printf("# %s_latency: TSC (lfence; rdtsc; lfence), scaled against CLOCK_MONOTONIC over 200 ms, %.4f ns per "
              "count; %ld measured bursts of %d calls after %ld warm-up bursts per thread, a %ld us sleep between "
              "bursts; %ld CPUs\n",
              kPeer, nanosPerCount, options.plan.bursts, burst::kBurstCalls, options.plan.warmup,
              burst::kSleepNanos / 1000, ::sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("\n| logger | message | threads | %s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n%s",
              burst::kColumnHeader, table.c_str());
  if (!options.csv.empty()) {
    std::ofstream out(options.csv);
    out << csv;
    if (!out.flush()) {
      std::fprintf(stderr, "%s_latency: cannot write %s\n", kPeer, options.csv.c_str());
      return 1;
    }
  }
  return lost ? 1 : 0;
}
