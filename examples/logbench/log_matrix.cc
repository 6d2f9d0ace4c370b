// log_matrix: zlog's table (the seed report 002), in Google Benchmark:
// nanoseconds per call for each logger x message size x thread count, with
// real file output.
//
//   log_matrix [--quick] [--dir DIR] [Google Benchmark flags]
//
// Loggers: muon-async (AsyncLogging, kBlock), muon-sync (SyncLogging),
// spdlog-async (8192-slot queue, block), spdlog-sync (basic_file_sink_mt),
// glog; and floor, no logger but the copy and write(2) every logger must
// do (FloorBackend.cc). Each benchmark logs a message of exactly N bytes (8, 512 or 4096)
// from T threads (1, 2, 4, 8, 16) at once, into a fresh directory of its
// own; its name is <logger>/<N> (Google Benchmark appends
// /real_time/threads:T).
//
// The counter ns_per_call is what one calling thread waits per call: the
// wall-clock time from its first call to the end of the last thread's loop,
// divided by its own calls, averaged over the threads. (Google Benchmark's
// own Time column divides by the calls of all threads together.) On 2 cores,
// 16 threads time-slice: 8x the 2-thread figure is the ideal.
//
// After each benchmark the logger is shut down (every line written, outside
// the timed loop) and its files are read back: a benchmark whose files lack
// a line ends with an error, unless the logger reports the line as dropped
// by design (the counter `dropped`; none of these settings drops).
// Before each, a file about the size of its output is written and deleted
// (RunFiles.h: the VM's first writes after idling are slow).
// --quick: threads 1, 2 and 16 only, and --benchmark_min_time=0.2.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "Backend.h"
#include "RunFiles.h"

namespace fs = std::filesystem;

namespace logbench {
namespace {

constexpr size_t kPayloadBytes[] = {8, 512, 4096};
constexpr int kAllThreads[] = {1, 2, 4, 8, 16};
constexpr int kQuickThreads[] = {1, 2, 16};
constexpr off_t kRollSize = 500 * 1000 * 1000;
// The warm-up is sized to the run (so that Google Benchmark's short trial
// runs stay short), up to this.
constexpr uint64_t kMaxWarmUpBytes = uint64_t{512} << 20;
// Bytes a logger adds to each message (its prefix and trailer), roughly.
constexpr uint64_t kLineOverhead = 64;

// The message: muduo's bench text repeated, cut to `bytes`. Its first 8
// bytes mark a message line when the files are read back.
std::string payloadOf(size_t bytes) {
  std::string text = std::string(kHello) + std::string(kAlphabet);
  std::string payload;
  while (payload.size() < bytes) payload += text;
  payload.resize(bytes);
  return payload;
}

struct Logger {
  const char* name;
  std::unique_ptr<Backend> backend;
};

std::string g_parent;  // each benchmark writes into a fresh directory below it
std::string g_runDir;  // the current benchmark's (thread 0 sets it up)

void runCell(benchmark::State& state, Backend* backend, size_t bytes) {
  const std::string payload = payloadOf(bytes);
  if (state.thread_index() == 0) {
    g_runDir = makeTempDir(g_parent + "/run.XXXXXX");
    uint64_t output = static_cast<uint64_t>(state.max_iterations) *
                      static_cast<uint64_t>(state.threads()) * (bytes + kLineOverhead);
    warmUp(g_runDir, std::min(output, kMaxWarmUpBytes));
    backend->open(g_runDir);
  }
  // Every thread passes a barrier at the loop's start and end; the clock
  // starts at this thread's first call.
  using Clock = std::chrono::steady_clock;
  Clock::time_point start;
  bool first = true;
  for (auto _ : state) {
    if (__builtin_expect(first, 0)) {
      start = Clock::now();
      first = false;
    }
    backend->logPayload(payload);
  }
  double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  state.counters["ns_per_call"] =
      benchmark::Counter(ns / static_cast<double>(state.iterations()), benchmark::Counter::kAvgThreads);
  if (state.thread_index() != 0) return;

  backend->finish();
  uint64_t expected = static_cast<uint64_t>(state.iterations()) * static_cast<uint64_t>(state.threads());
  uint64_t dropped = backend->dropped();
  uint64_t fileBytes = 0, lines = 0;
  bool read = scanLogFiles(g_runDir, std::string_view(payload).substr(0, 8), nullptr, &fileBytes, &lines);
  backend->close();
  std::error_code ec;
  fs::remove_all(g_runDir, ec);
  state.counters["dropped"] = static_cast<double>(dropped);
  if (!read) {
    state.SkipWithError("the log files could not be read back");
  } else if (lines + dropped != expected) {
    std::string error = "lost lines: " + std::to_string(expected) + " logged, " +
                        std::to_string(lines) + " in the files, " + std::to_string(dropped) +
                        " reported dropped";
    state.SkipWithError(error.c_str());
  }
}

// Our flags, taken out of argv before Google Benchmark sees the rest.
struct Options {
  bool quick = false;
  std::string dir;
};

Options takeOwnFlags(int* argc, char** argv, std::vector<std::string>* extra) {
  Options opts;
  int out = 1;
  bool minTimeGiven = false;
  for (int i = 1; i < *argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick") {
      opts.quick = true;
    } else if (arg == "--dir" && i + 1 < *argc) {
      opts.dir = argv[++i];
    } else if (arg.rfind("--dir=", 0) == 0) {
      opts.dir = arg.substr(6);
    } else {
      if (arg.rfind("--benchmark_min_time", 0) == 0) minTimeGiven = true;
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  if (opts.quick && !minTimeGiven) extra->push_back("--benchmark_min_time=0.2");
  return opts;
}

int run(int argc, char** argv) {
  std::vector<std::string> extra;
  Options opts = takeOwnFlags(&argc, argv, &extra);
  std::vector<char*> args(argv, argv + argc);
  for (std::string& e : extra) args.push_back(e.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;

  bool ownParent = opts.dir.empty();
  if (ownParent) {
    g_parent = makeTempDir("/tmp/log_matrix.XXXXXX");
  } else {
    std::error_code ec;
    fs::create_directories(opts.dir, ec);
    g_parent = makeTempDir(opts.dir + "/log_matrix.XXXXXX");
  }

  MuonOptions muonAsync;  // kBlock: nothing is lost
  std::vector<Logger> loggers;
  loggers.push_back({"muon-async", makeMuonBackend(muonAsync)});
  MuonOptions muonSync;
  muonSync.rollSize = kRollSize;
  loggers.push_back({"muon-sync", makeMuonSyncBackend(muonSync)});
  loggers.push_back({"spdlog-async", makeSpdlogAsyncBackend()});
  loggers.push_back({"spdlog-sync", makeSpdlogSyncBackend()});
  loggers.push_back({"glog", makeGlogBackend(argv[0])});
  loggers.push_back({"floor", makeFloorBackend()});

  std::vector<int> threads(std::begin(kAllThreads), std::end(kAllThreads));
  if (opts.quick) threads.assign(std::begin(kQuickThreads), std::end(kQuickThreads));
  for (Logger& logger : loggers) {
    for (size_t bytes : kPayloadBytes) {
      std::string name = std::string(logger.name) + "/" + std::to_string(bytes);
      auto* b = benchmark::RegisterBenchmark(name.c_str(), runCell, logger.backend.get(), bytes);
      b->UseRealTime();
      for (int t : threads) b->Threads(t);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  loggers.clear();
  std::error_code ec;
  fs::remove_all(g_parent, ec);
  return 0;
}

}  // namespace
}  // namespace logbench

int main(int argc, char** argv) { return logbench::run(argc, argv); }
