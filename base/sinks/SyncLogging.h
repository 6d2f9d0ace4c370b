// SyncLogging: the calling thread writes each line into the log file itself,
// under one lock: no backend thread, no buffers of lines waiting anywhere
// but the file's own 64 KiB write buffer (or none, with writeThrough).
//
// The same files as AsyncLogging: LogFile's names, rolling by size and at
// midnight, retention, the current-file link, stages and file mode, chosen
// through the same LogFile::Options. Attach it as AsyncLogging:
//
//   muon::SyncLogging log("/var/log/app/server", 500 * 1000 * 1000);
//   auto attached = muon::Logger::attach(log);
//
// When to pick it over AsyncLogging (docs/logging.md has the measurements):
// few lines from few threads, or a program that must not start a thread
// (a short tool, a forked child). Each line costs the caller the copy into
// the file buffer under a lock shared by every logging thread, and, every
// 64 KiB, the write(2) of that buffer; with many threads the lock is
// contended and AsyncLogging is much faster.
//
// A line reaches the kernel when the 64 KiB buffer fills, at flush() (and
// so at every line at or above Logger::setFlushLevel, and before a FATAL
// line aborts), with the first line appended flushInterval seconds or more
// after the last flush, at a roll, or at destruction. Nothing flushes a
// buffer while no line comes (there is no thread): a program that logs a
// few lines and then waits keeps them in memory until one of those, so
// call flush() before a long wait, set a flush level, or use
// Options::writeThrough: every line is then handed to write(2) before
// append() returns, and survives kill -9.
//
// Thread safety: append(), flush() and stats() from any thread;
// requestReopen() also from a signal handler. A child forked while another
// thread was inside append() would find the lock taken for ever: a child
// that logs should be forked by a program whose other threads do not log
// at that moment, or get its own SyncLogging.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "muon/base/LogFile.h"

namespace muon {

class SyncLogging {
 public:
  struct Options {
    // Seconds after which the next append also flushes the file buffer. 3,
    // as AsyncLogging. Nothing flushes between appends: there is no thread.
    int flushInterval = 3;
    // Write each line with its own write(2) before append() returns, instead
    // of through the 64 KiB buffer: the line survives the process's death,
    // at the price of a system call per line. With file stages this makes
    // one compressed or encrypted record per line. Off by default.
    bool writeThrough = false;
    // The log files: retention, link, stages, mode (LogFile.h). Off by default.
    LogFile::Options files;
  };

  SyncLogging(const std::string& basename, off_t rollSize);
  SyncLogging(const std::string& basename, off_t rollSize, const Options& options);
  // Flushes and closes the file.
  ~SyncLogging();
  SyncLogging(const SyncLogging&) = delete;
  SyncLogging& operator=(const SyncLogging&) = delete;

  // Writes one line (it should end in '\n') into the file buffer, or the
  // file itself with writeThrough; rolls when the file is full or the day
  // changed. Never throws and never stops the caller: a failed write is
  // reported on stderr and counted in stats().file.lostBytes.
  void append(const char* logline, size_t len);
  // Hands every buffered byte to write(2).
  void flush();
  // For Logger::attach: what the files hold (Options::files.format); a JSON
  // SyncLogging takes statements' records and writes their JSON lines.
  LineFormat lineFormat() const { return file_.format(); }
  // Asks for a new file (logrotate's SIGHUP): async-signal-safe, it only
  // sets a flag; the next append() or flush() starts the new file first.
  void requestReopen();

  struct Stats {
    LogFile::Stats file;
  };
  Stats stats() const;
  // The file being written ("" while none could be opened).
  std::string currentFileName() const { return file_.currentFileName(); }

  // For tests: the file's write seam (set before the first append).
  void setWriteFunction(WriteFunction write) { file_.setWriteFunction(std::move(write)); }

 private:
  void reopenIfRequested();

  const int flushInterval_;
  LogFile file_;  // thread-safe: it holds the lock every call takes
  std::atomic<int64_t> lastFlush_;  // CLOCK_MONOTONIC_COARSE seconds
  std::atomic<bool> reopenRequested_{false};
  static_assert(std::atomic<bool>::is_always_lock_free,
                "requestReopen() must stay async-signal-safe");
};

}  // namespace muon
