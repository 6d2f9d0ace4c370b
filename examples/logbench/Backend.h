// The seam between logbench's driver and the loggers it measures.
//
// Internal to logbench. One Backend lives for the whole process; each run
// calls open() (untimed), then produce() from every producer thread, then
// finish() (timed: it returns once every line is in the file), then close()
// (untimed). The driver calls open/finish/close from the main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "muon/base/LineFormat.h"
#include "muon/base/TscClock.h"

namespace logbench {

// The fixed part of every message; also what the line counter looks for, so
// that report lines a logger adds of its own (muon's "Dropped log
// messages ...", glog's file header) are not counted as messages.
constexpr std::string_view kHello = "Hello 0123456789";
constexpr std::string_view kAlphabet = " abcdefghijklmnopqrstuvwxyz ";

class Backend {
 public:
  virtual ~Backend() = default;

  // Name printed as the first field of the summary line.
  virtual const char* name() const = 0;
  // Prepares a logger writing into `dir` (an empty directory of its own).
  virtual void open(const std::string& dir) = 0;
  // Logs messages [begin, end): "Hello 0123456789 abcdefghijklmnopqrstuvwxyz "
  // + extra + counter. Safe to call from several threads at once. With
  // samples non-null, stores the TscClock counts each call took in
  // samples[i - begin].
  virtual void produce(uint64_t begin, uint64_t end, std::string_view extra,
                       uint64_t* samples) = 0;
  // Logs messages [begin, end) of "int, int, double": "Hello 0123456789
  // Logging int: " i ", int: " j ", double: " d, from the counter i, as the
  // logger's own formatting writes them; false if this logger has no such
  // workload. Otherwise as produce().
  virtual bool produceNumbers(uint64_t begin, uint64_t end, uint64_t* samples) {
    static_cast<void>(begin);
    static_cast<void>(end);
    static_cast<void>(samples);
    return false;
  }
  // Logs one message that is exactly `payload` (log_matrix's workload).
  // Safe to call from several threads at once.
  virtual void logPayload(std::string_view payload) = 0;
  // Returns once every line logged so far is written to the file(s) and the
  // logger has let go of them (backend joined, file flushed).
  virtual void finish() = 0;
  // Messages the logger says it threw away in the last run.
  virtual uint64_t dropped() const { return 0; }
  // Disk blocks of the crash-safe spool at the end of the last run (muon).
  virtual uint64_t spoolDiskBytes() const { return 0; }
  // Frees what the run left behind, outside the timed region.
  virtual void close() {}
};

// The loop every backend runs, inlined into each with its own log statement,
// so no backend pays a virtual call per message.
template <typename LogOne>
inline void produceLoop(LogOne&& logOne, uint64_t begin, uint64_t end, uint64_t* samples) {
  if (samples == nullptr) {
    for (uint64_t i = begin; i < end; ++i) logOne(i);
    return;
  }
  for (uint64_t i = begin; i < end; ++i) {
    uint64_t t0 = muon::TscClock::counts();
    logOne(i);
    samples[i - begin] = muon::TscClock::counts() - t0;
  }
}

// The numbers of message i of the "int, int, double" workload.
inline int numbersJ(uint64_t i) { return static_cast<int>(i * 3 + 1); }
inline double numbersD(uint64_t i) { return static_cast<double>(i) * 1.5 + 0.25; }

enum class MuonPolicy { kDrop, kBlock };

// How logbench sets up muon's AsyncLogging (its muon-only flags).
struct MuonOptions {
  MuonPolicy policy = MuonPolicy::kBlock;
  bool crashSafe = false;
  bool zstd = false;
  std::string keyFile;                 // empty: no encryption
  off_t rollSize = 500 * 1000 * 1000;  // as muduo's bench: a long run pays for a few rolls
  size_t maxFiles = 0;                 // 0: keep every file
  muon::LineFormat format = muon::LineFormat::kText;  // --format (muon, muon-sync)
  int fields = 0;                      // --fields N: key-value fields per line (muon, muon-sync)
};

std::unique_ptr<Backend> makeMuonBackend(const MuonOptions& options);
// muon's SyncLogging: the calling thread writes into the file (muon-sync).
std::unique_ptr<Backend> makeMuonSyncBackend(const MuonOptions& options);
std::unique_ptr<Backend> makeSpdlogAsyncBackend();
std::unique_ptr<Backend> makeSpdlogSyncBackend();
std::unique_ptr<Backend> makeGlogBackend(const char* argv0);
// No logger: the copy and write(2) under every logger's cost (floor).
std::unique_ptr<Backend> makeFloorBackend();

}  // namespace logbench
