// log_microbench: what one LOG_INFO costs the calling thread, piece by piece
// (Google Benchmark). logbench measures whole runs against the peers; this
// splits the calling thread's nanoseconds so docs/logging.md can say where
// they go. Each step adds one stage to the previous:
//   LogStreamMessage     the message's << calls into a LogStream
//   LogInfoDiscarded     + Logger: cached date-time prefix, level, trailer, output call
//   LogInfoAsyncAppend   + AsyncLogging::append (fetch_add, memcpy, commit); the
//                          backend writes nothing (its writer discards), so the
//                          disk is not measured
// and one row per feature (LOG_IF, LOG_EVERY_N ..., CHECK_NE, module levels,
// the backtrace ring, the flush level), enabled and disabled.
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

// The features of docs/logging.md, each enabled (it does its work) and
// disabled (its level is off), all with the discarding output.
template <typename Statement>
void runDiscarded(benchmark::State& state, Statement statement) {
  muon::Logger::setLogLevel(muon::Logger::INFO);
  muon::Logger::setOutput(&discard);
  uint64_t i = 0;
  for (auto _ : state) statement(i++);
  muon::Logger::setOutput(nullptr);
  benchmark::DoNotOptimize(i);
}

#define MESSAGE "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << ' ' << i

void BM_LogIfFalse(benchmark::State& state) {
  runDiscarded(state, [](uint64_t i) { LOG_IF(INFO, i == ~0ull) << MESSAGE; });
}
BENCHMARK(BM_LogIfFalse);

void BM_LogEveryN1000(benchmark::State& state) {
  runDiscarded(state, [](uint64_t i) { LOG_EVERY_N(INFO, 1000) << MESSAGE; });
}
BENCHMARK(BM_LogEveryN1000);

void BM_LogEveryNDisabled(benchmark::State& state) {
  runDiscarded(state, [](uint64_t i) { LOG_EVERY_N(DEBUG, 1000) << MESSAGE; });
}
BENCHMARK(BM_LogEveryNDisabled);

void BM_LogFirstNPast(benchmark::State& state) {
  runDiscarded(state, [](uint64_t i) { LOG_FIRST_N(INFO, 1) << MESSAGE; });
}
BENCHMARK(BM_LogFirstNPast);

void BM_LogEveryTSuppressed(benchmark::State& state) {
  runDiscarded(state, [](uint64_t i) { LOG_EVERY_T(INFO, 1e6) << MESSAGE; });
}
BENCHMARK(BM_LogEveryTSuppressed);

void BM_CheckNePasses(benchmark::State& state) {
  runDiscarded(state, [](uint64_t i) { CHECK_NE(i, ~0ull) << MESSAGE; });
}
BENCHMARK(BM_CheckNePasses);

void BM_LogDebugDisabledWithModules(benchmark::State& state) {
  muon::Logger::setModuleLevel("TcpConnection", muon::Logger::TRACE);
  runDiscarded(state, [](uint64_t i) { LOG_DEBUG << MESSAGE; });
  muon::Logger::clearModuleLevels();
}
BENCHMARK(BM_LogDebugDisabledWithModules);

void BM_LogDebugIntoBacktrace(benchmark::State& state) {
  muon::Logger::enableBacktrace(100);
  runDiscarded(state, [](uint64_t i) { LOG_DEBUG << MESSAGE; });
  muon::Logger::enableBacktrace(0);
}
BENCHMARK(BM_LogDebugIntoBacktrace);

void noFlush() {}
void BM_LogInfoFlushed(benchmark::State& state) {
  muon::Logger::setFlush(&noFlush);
  muon::Logger::setFlushLevel(muon::Logger::INFO);
  runDiscarded(state, [](uint64_t i) { LOG_INFO << MESSAGE; });
  muon::Logger::setFlushLevel(muon::Logger::FATAL);
  muon::Logger::setFlush(nullptr);
}
BENCHMARK(BM_LogInfoFlushed);

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
