// log_microbench: what one LOG_INFO costs the calling thread, piece by piece
// (Google Benchmark). logbench measures whole runs against the peers; this
// splits the calling thread's nanoseconds so docs/logging.md can say where
// they go. Each step adds one stage to the previous:
//   LogStreamMessage     the message's << calls into a LogStream
//   LogInfoDiscarded     + Logger: cached date-time prefix, level, trailer, output call
//   LogInfoAsyncAppend   + AsyncLogging::append (fetch_add, memcpy, commit); the
//                          backend writes nothing (its writer discards), so the
//                          disk is not measured
//   LogInfoAsyncAppendCrashSafe   the same in the crash-safe mode (buffers in a
//                          spool file, one index entry per line)
// Run: build/bin/log_microbench [--benchmark_repetitions=5 ...]
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "muon/base/AsyncLogging.h"
#include "muon/base/LogStream.h"
#include "muon/base/Logging.h"

namespace {

void discard(const char* msg, size_t len) {
  benchmark::DoNotOptimize(msg);
  benchmark::DoNotOptimize(len);
}

void BM_LogStreamMessage(benchmark::State& state) {
  uint64_t i = 0;
  for (auto _ : state) {
    muon::LogStream stream;
    stream << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << ' ' << i++;
    benchmark::DoNotOptimize(stream.buffer().data());
  }
}
BENCHMARK(BM_LogStreamMessage);

void BM_LogInfoDiscarded(benchmark::State& state) {
  muon::Logger::setLogLevel(muon::Logger::INFO);
  muon::Logger::setOutput(&discard);
  uint64_t i = 0;
  for (auto _ : state) {
    LOG_INFO << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << ' ' << i++;
  }
  muon::Logger::setOutput(nullptr);
}
BENCHMARK(BM_LogInfoDiscarded);

void BM_LogDebugDisabled(benchmark::State& state) {
  muon::Logger::setLogLevel(muon::Logger::INFO);
  uint64_t i = 0;
  for (auto _ : state) {
    LOG_DEBUG << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << ' ' << i++;
  }
  benchmark::DoNotOptimize(i);
}
BENCHMARK(BM_LogDebugDisabled);

muon::AsyncLogging* g_async = nullptr;
void asyncOutput(const char* msg, size_t len) { g_async->append(msg, len); }

// One AsyncLogging for all threads of a run; its writer only counts, so the
// producers meet the real buffer switching but never the disk.
void asyncAppend(benchmark::State& state, bool crashSafe) {
  static std::unique_ptr<muon::AsyncLogging> log;
  static std::string dir;
  if (state.thread_index() == 0) {
    // The LogFile still creates its (empty) file: in a directory of our own.
    char tmpl[] = "/tmp/log_microbench.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      state.SkipWithError("mkdtemp failed");
      return;
    }
    dir = tmpl;
    muon::AsyncLogging::Options options;
    options.policy = muon::AsyncLogging::kBlock;
    options.crashSafe = crashSafe;
    log = std::make_unique<muon::AsyncLogging>(dir + "/bench", 1L << 40, options);
    log->setWriteFunction([](int, const char*, size_t len) { return static_cast<ssize_t>(len); });
    log->start();
    g_async = log.get();
    muon::Logger::setLogLevel(muon::Logger::INFO);
    muon::Logger::setOutput(&asyncOutput);
  }
  uint64_t i = 0;
  for (auto _ : state) {
    LOG_INFO << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << ' ' << i++;
  }
  if (state.thread_index() == 0) {
    muon::Logger::setOutput(nullptr);
    log.reset();
    g_async = nullptr;
    std::filesystem::remove_all(dir);
  }
}
void BM_LogInfoAsyncAppend(benchmark::State& state) { asyncAppend(state, false); }
BENCHMARK(BM_LogInfoAsyncAppend)->Threads(1)->Threads(2)->UseRealTime();

void BM_LogInfoAsyncAppendCrashSafe(benchmark::State& state) { asyncAppend(state, true); }
BENCHMARK(BM_LogInfoAsyncAppendCrashSafe)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
