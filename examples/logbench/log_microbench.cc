// log_microbench: what one LOG_INFO costs the calling thread, piece by piece
// (Google Benchmark). logbench measures whole runs against the peers; this
// splits the calling thread's nanoseconds so docs/logging.md can say where
// they go. Each step adds one stage to the previous:
//   LogStreamMessage     the message's << calls into a LogStream
//   LogInfoDiscarded     + Logger: cached date-time prefix, level, trailer, output call
//   LogInfoAsyncAppend   + AsyncLogging::append (fetch_add, memcpy, commit); the
//                          backend writes nothing (its writer discards), so the
//                          disk is not measured
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

// One AsyncLogging for all threads of a run; its writer only counts, so the
// producers meet the real buffer switching but never the disk.
void BM_LogInfoAsyncAppend(benchmark::State& state) {
  static std::unique_ptr<muon::AsyncLogging> log;
  static muon::LogAttachment attached;
  static std::string dir;
  if (state.thread_index() == 0) {
    // The LogFile still creates its (empty) file: in a directory of our own.
    char tmpl[] = "/tmp/log_microbench.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      state.SkipWithError("mkdtemp failed");
      return;
    }
    dir = tmpl;
    log = std::make_unique<muon::AsyncLogging>(dir + "/bench", 1L << 40, 3,
                                               muon::AsyncLogging::kBlock);
    log->setWriteFunction([](int, const char*, size_t len) { return static_cast<ssize_t>(len); });
    log->start();
    muon::Logger::setLogLevel(muon::Logger::INFO);
    attached = muon::Logger::attach(*log);
  }
  uint64_t i = 0;
  for (auto _ : state) {
    LOG_INFO << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << ' ' << i++;
  }
  if (state.thread_index() == 0) {
    attached.detach();
    log.reset();
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(BM_LogInfoAsyncAppend)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
