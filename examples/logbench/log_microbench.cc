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
// and the backend's formatting of deferred statements:
//   BackendFormatsIntIntDouble   one "int, int, double" record (as a
//                          statement attached to AsyncLogging records it) into
//                          its text line, as AsyncLogging's backend does
// and the backend's file stages, one 4 MiB buffer at a time (bytes/s of log
// text; the counter `ratio` is text bytes per byte written):
//   ZstdStage/<level>/<text>   zstd at level 1, 3, 6 (text 0: logbench's lines,
//                              1: a mix of varied server lines)
//   AesGcmStage/<text>         AES-256-GCM
// and LogInfoToStdout/<0|1>: the default output, stdout, through stdio's
// buffer (0) or as it is, one write(2) per line (1),
// and one row per feature (LOG_IF, LOG_EVERY_N ..., CHECK_NE, module levels,
// the backtrace ring, the flush level), enabled and disabled.
// Run: build/bin/log_microbench [--benchmark_repetitions=5 ...]
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "MadeRecords.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/LogFields.h"
#include "muon/base/LogStream.h"
#include "muon/base/Logging.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/TscClock.h"
#include "muon/base/filestages/AesGcmStage.h"
#include "muon/base/filestages/ZstdStage.h"

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
// disabled (its level is off), all with the discarding output unless
// `output` says otherwise (nullptr: the default, stdout).
template <typename Statement>
void runDiscarded(benchmark::State& state, Statement statement,
                  muon::Logger::OutputFunc output = &discard) {
  muon::Logger::setLogLevel(muon::Logger::INFO);
  muon::Logger::setOutput(output);
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

// LOG_INFO to stdout with no output set: one write(2) per line (arg 1),
// against stdio's buffering (arg 0: fwrite into stdout's 4 KiB buffer, one
// write(2) per buffer). What stdout is decides the cost of the system call,
// so run it with stdout at /dev/null and into a pipe, the report elsewhere:
//   log_microbench --benchmark_filter=Stdout --benchmark_out=r.txt
//     --benchmark_out_format=console | cat >/dev/null
void stdioOutput(const char* msg, size_t len) { std::fwrite(msg, 1, len, stdout); }
void BM_LogInfoToStdout(benchmark::State& state) {
  runDiscarded(state, [](uint64_t i) { LOG_INFO << MESSAGE; },
               state.range(0) == 0 ? &stdioOutput : nullptr);
  std::fflush(stdout);
}
BENCHMARK(BM_LogInfoToStdout)->Arg(0)->Arg(1);

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
void asyncAppend(benchmark::State& state, bool crashSafe) {
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
    muon::AsyncLogging::Options options;
    options.policy = muon::AsyncLogging::kBlock;
    options.crashSafe = crashSafe;
    log = std::make_unique<muon::AsyncLogging>(dir + "/bench", 1L << 40, options);
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
// Records of "Logging int: " << i << ", int: " << j << ", double: " << d
// with varied values (MadeRecords.h), each formatted into its line.
void BM_BackendFormatsIntIntDouble(benchmark::State& state) {
  const logbench::MadeRecords records(256, [](auto recorder, size_t r) {
    const int i = static_cast<int>(r * 7919);
    return recorder << "Logging int: " << i << ", int: " << -i / 3 << ", double: " << i * 1.25 + 0.1;
  });
  muon::detail::RecordFormatter formatter;
  muon::detail::LinePrefix prefix;
  std::unique_ptr<char[]> out(new char[muon::detail::RecordFormatter::kMaxLine]);
  size_t r = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(formatter.format(records[r], prefix, 4321, " 4321 ", out.get()));
    r = (r + 1) % records.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BackendFormatsIntIntDouble);

// Records of logbench's --fields 3 statement (a message, a string, an
// integer and a floating-point field), each formatted into its line in the
// format the argument names (0 text, 1 JSON, 2 logfmt): the backend's cost
// per line for each encoder.
void BM_BackendFormatsThreeFields(benchmark::State& state) {
  static const std::string kUser = "alice";
  const logbench::MadeRecords records(256, [](auto recorder, size_t r) {
    const int i = static_cast<int>(r * 7919);
    return recorder << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << ' ' << i
           << muon::kv("user", kUser) << muon::kv("count", i) << muon::kv("ratio", i * 0.25);
  });
  const muon::LineFormat formats[] = {muon::LineFormat::kText, muon::LineFormat::kJson,
                                      muon::LineFormat::kLogfmt};
  muon::detail::RecordFormatter formatter(formats[state.range(0)]);
  muon::detail::LinePrefix prefix;
  std::unique_ptr<char[]> out(new char[formatter.maxLine()]);
  size_t r = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    const size_t n = formatter.format(records[r], prefix, 4321, " 4321 ", out.get());
    benchmark::DoNotOptimize(n);
    bytes += n;
    r = (r + 1) % records.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_BackendFormatsThreeFields)->Arg(0)->Arg(1)->Arg(2);

void BM_LogInfoAsyncAppend(benchmark::State& state) { asyncAppend(state, false); }
BENCHMARK(BM_LogInfoAsyncAppend)->Threads(1)->Threads(2)->UseRealTime();

void BM_LogInfoAsyncAppendCrashSafe(benchmark::State& state) { asyncAppend(state, true); }
BENCHMARK(BM_LogInfoAsyncAppendCrashSafe)->Threads(1)->Threads(2)->UseRealTime();

// 4 MiB of log text. 0: logbench's own line, the counter varying; 1: a mix
// of the kinds of line a server writes (requests, timings, ids, warnings),
// from a fixed seed, so each run compresses the same bytes.
std::string logText(int kind) {
  std::string text;
  std::mt19937_64 random(42);
  const char* const levels[] = {"INFO ", "INFO ", "INFO ", "DEBUG", "WARN ", "ERROR"};
  const char* const paths[] = {"/api/v1/orders", "/api/v1/users", "/health", "/static/app.js",
                               "/api/v2/search", "/login"};
  const char* const words[] = {"connection", "timeout",  "retrying", "cache", "miss",   "hit",
                               "shard",      "replica",  "leader",   "lease", "commit", "rollback"};
  uint64_t micros = 0;
  for (uint64_t i = 0; text.size() < muon::AsyncLogging::kBufferSize - 4096; ++i) {
    char line[512];
    int n;
    if (kind == 0) {
      n = std::snprintf(line, sizeof line,
                        "20261123 10:00:%02d.%06dZ  4242 INFO  Hello 0123456789 abcdefghijklmnopqrstu"
                        "vwxyz  %llu - logbench.cc:42\n",
                        static_cast<int>(i / 100000 % 60), static_cast<int>(i % 1000000),
                        static_cast<unsigned long long>(i));
    } else {
      micros += random() % 2000;
      int tid = 4000 + static_cast<int>(random() % 16);
      switch (random() % 4) {
        case 0:
          n = std::snprintf(line, sizeof line,
                            "20261123 10:%02d:%02d.%06dZ %5d %s %s %d.%d.%d.%d %llu us status=%d "
                            "bytes=%llu - HttpServer.cc:%d\n",
                            static_cast<int>(micros / 60000000 % 60),
                            static_cast<int>(micros / 1000000 % 60), static_cast<int>(micros % 1000000),
                            tid, levels[random() % 6], paths[random() % 6],
                            static_cast<int>(random() % 256), static_cast<int>(random() % 256),
                            static_cast<int>(random() % 256), static_cast<int>(random() % 256),
                            static_cast<unsigned long long>(random() % 100000),
                            random() % 10 == 0 ? 500 : 200,
                            static_cast<unsigned long long>(random() % 1000000),
                            static_cast<int>(100 + random() % 400));
          break;
        case 1:
          n = std::snprintf(line, sizeof line,
                            "20261123 10:%02d:%02d.%06dZ %5d %s %s %s on %s-%02d (attempt %d) "
                            "request_id=%016llx - Replica.cc:%d\n",
                            static_cast<int>(micros / 60000000 % 60),
                            static_cast<int>(micros / 1000000 % 60), static_cast<int>(micros % 1000000),
                            tid, levels[random() % 6], words[random() % 12], words[random() % 12],
                            words[random() % 12], static_cast<int>(random() % 32),
                            static_cast<int>(random() % 5), static_cast<unsigned long long>(random()),
                            static_cast<int>(100 + random() % 400));
          break;
        default:
          n = std::snprintf(line, sizeof line,
                            "20261123 10:%02d:%02d.%06dZ %5d %s order %llu user %llu total %llu.%02llu "
                            "items %llu - Orders.cc:%d\n",
                            static_cast<int>(micros / 60000000 % 60),
                            static_cast<int>(micros / 1000000 % 60), static_cast<int>(micros % 1000000),
                            tid, levels[random() % 6], static_cast<unsigned long long>(random() % 10000000),
                            static_cast<unsigned long long>(random() % 100000),
                            static_cast<unsigned long long>(random() % 1000),
                            static_cast<unsigned long long>(random() % 100),
                            static_cast<unsigned long long>(1 + random() % 9),
                            static_cast<int>(100 + random() % 400));
      }
    }
    text.append(line, static_cast<size_t>(n));
  }
  return text;
}

void runStage(benchmark::State& state, muon::FileStage& stage, const std::string& text) {
  std::string out;
  size_t written = 0;
  for (auto _ : state) {
    out.clear();
    std::string error;
    if (!stage.transform(text, &out, &error)) {
      state.SkipWithError(error.c_str());
      return;
    }
    written = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["ratio"] = static_cast<double>(text.size()) / static_cast<double>(written);
}

void BM_ZstdStage(benchmark::State& state) {
  static const std::string texts[2] = {logText(0), logText(1)};
  muon::ZstdStage stage(static_cast<int>(state.range(0)));
  runStage(state, stage, texts[state.range(1)]);
}
BENCHMARK(BM_ZstdStage)->ArgsProduct({{1, 3, 6}, {0, 1}})->Unit(benchmark::kMillisecond);

void BM_AesGcmStage(benchmark::State& state) {
  static const std::string texts[2] = {logText(0), logText(1)};
  muon::AesKey key;
  key.fill(7);
  muon::AesGcmStage stage(key);
  runStage(state, stage, texts[state.range(0)]);
}
BENCHMARK(BM_AesGcmStage)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
