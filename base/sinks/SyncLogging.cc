#include "muon/base/SyncLogging.h"

#include <time.h>

namespace muon {

namespace {

LogFile::Options fileOptions(const SyncLogging::Options& options) {
  LogFile::Options files = options.files;
  files.buffered = !options.writeThrough;
  return files;
}

// LogFile looks at its clock (for the day and the flush interval) every this
// many appends; the flush interval is also checked on every append, with the
// coarse clock below.
constexpr int kCheckEveryN = 64;

// Seconds on CLOCK_MONOTONIC_COARSE: a few nanoseconds (no counter read),
// to the tick, which is plenty for an interval counted in seconds.
int64_t coarseSeconds() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return ts.tv_sec;
}

}  // namespace

SyncLogging::SyncLogging(const std::string& basename, off_t rollSize)
    : SyncLogging(basename, rollSize, Options()) {}

SyncLogging::SyncLogging(const std::string& basename, off_t rollSize, const Options& options)
    : flushInterval_(options.flushInterval > 0 ? options.flushInterval : 1),
      file_(basename, rollSize, /*threadSafe=*/true, flushInterval_, kCheckEveryN,
            fileOptions(options)),
      lastFlush_(coarseSeconds()) {}

SyncLogging::~SyncLogging() { file_.flush(); }

void SyncLogging::append(const char* logline, size_t len) {
  if (__builtin_expect(reopenRequested_.load(std::memory_order_relaxed), 0)) reopenIfRequested();
  file_.append(logline, len);
  int64_t now = coarseSeconds();
  int64_t last = lastFlush_.load(std::memory_order_relaxed);
  // One of the threads that find the interval over flushes.
  if (now - last >= flushInterval_ &&
      lastFlush_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    file_.flush();
  }
}

void SyncLogging::flush() {
  reopenIfRequested();
  file_.flush();
}

void SyncLogging::requestReopen() { reopenRequested_.store(true, std::memory_order_relaxed); }

void SyncLogging::reopenIfRequested() {
  // One of the threads that see the flag takes it and rolls (flushing the
  // old file first); the others go on into whichever file is current.
  if (reopenRequested_.exchange(false)) file_.rollFile();
}

SyncLogging::Stats SyncLogging::stats() const { return Stats{file_.stats()}; }

}  // namespace muon
