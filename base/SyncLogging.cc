#include "muon/base/SyncLogging.h"

namespace muon {

namespace {

LogFile::Options fileOptions(const SyncLogging::Options& options) {
  LogFile::Options files = options.files;
  files.buffered = !options.writeThrough;
  return files;
}

// LogFile looks at the clock (for the day and the flush interval) every this
// many appends; a clock read on every line would cost more than the copy.
constexpr int kCheckEveryN = 64;

}  // namespace

SyncLogging::SyncLogging(const std::string& basename, off_t rollSize)
    : SyncLogging(basename, rollSize, Options()) {}

SyncLogging::SyncLogging(const std::string& basename, off_t rollSize, const Options& options)
    : file_(basename, rollSize, /*threadSafe=*/true,
            options.flushInterval > 0 ? options.flushInterval : 1, kCheckEveryN,
            fileOptions(options)) {}

SyncLogging::~SyncLogging() { file_.flush(); }

void SyncLogging::append(const char* logline, size_t len) {
  if (__builtin_expect(reopenRequested_.load(std::memory_order_relaxed), 0)) reopenIfRequested();
  file_.append(logline, len);
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
