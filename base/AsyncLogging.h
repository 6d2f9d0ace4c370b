// AsyncLogging: many threads log, one backend thread writes the file.
//
// muduo's double buffering, with the front end made lock-free: producers
// reserve space in the current 4 MiB buffer with one fetch_add and copy
// their line in; only the producer that finds the buffer full takes the lock,
// to queue it and put a spare in its place. The backend thread wakes when a
// buffer fills or every flushInterval seconds, takes the queued buffers under
// the lock and writes them through a LogFile outside it.
//
// At most kMaxPendingBuffers full buffers may wait. Past that, kDrop (the
// default) drops all queued buffers but the first two, as muduo does, counts
// every message in them, and writes
//   "Dropped log messages at <time>, N larger buffers (M messages)"
// to the file and to stderr; kBlock makes producers wait, so nothing is lost.
//
// Thread safety: append() and flush() from any thread; start() and stop()
// from the owning thread. Lines from one thread stay in order.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "muon/base/FileUtil.h"
#include "muon/base/LogFile.h"

namespace muon {

class AsyncLogging {
 public:
  enum OverflowPolicy { kDrop, kBlock };

  static constexpr size_t kBufferSize = 4 * 1024 * 1024;
  static constexpr size_t kMaxPendingBuffers = 25;

  AsyncLogging(const std::string& basename, off_t rollSize, int flushInterval = 3,
               OverflowPolicy policy = kDrop);
  ~AsyncLogging();  // stop()
  AsyncLogging(const AsyncLogging&) = delete;
  AsyncLogging& operator=(const AsyncLogging&) = delete;

  // Copies one line in. A line longer than kBufferSize is cut to fit.
  // Lines appended before start() wait in the buffer; they are not lost.
  void append(const char* logline, size_t len);

  // Starts the backend; returns once it runs.
  void start();
  // Writes every line appended before the call, flushes the file, then
  // joins the backend. Idempotent.
  void stop();
  // Waits until every line appended before the call is written and the file
  // flushed (LOG_FATAL calls this before abort). Returns at once if the
  // backend is not running.
  void flush();

  struct Stats {
    uint64_t messagesDropped = 0;
    uint64_t buffersDropped = 0;
    LogFile::Stats file;
  };
  Stats stats() const;

  // For tests: the LogFile's write seam (set before start()).
  void setWriteFunction(WriteFunction write);

 private:
  struct Buffer;
  void threadFunc();
  void appendSlow(const char* logline, size_t len);
  // Swaps a fresh buffer in for `full` if `full` is still current. Lock held.
  void retireCurrent(Buffer* full, std::unique_lock<std::mutex>& lock);
  void waitForWriters(Buffer* b);
  Buffer* takeSpare();
  void writeBuffers(std::vector<Buffer*>& buffers);

  const int flushInterval_;
  const OverflowPolicy policy_;

  // Reserve word: buffer slot index in the high 16 bits, offset in the low 48.
  // One fetch_add both picks the current buffer and reserves space in it.
  alignas(64) std::atomic<uint64_t> reserve_;
  alignas(64) mutable std::mutex mutex_;
  std::condition_variable backendCond_;   // a buffer is queued, or stop/flush
  std::condition_variable producerCond_;  // room in the queue (kBlock), a flush done
  std::vector<std::unique_ptr<Buffer>> slots_;  // every buffer ever made, by slot index
  std::vector<Buffer*> queued_;                 // full, waiting for the backend
  std::vector<Buffer*> spares_;                 // empty, ready to be current
  size_t inFlight_ = 0;                         // taken by the backend, not yet written
  uint64_t flushRequested_ = 0;
  uint64_t flushDone_ = 0;
  bool running_ = false;
  bool stopping_ = false;
  uint64_t messagesDropped_ = 0;
  uint64_t buffersDropped_ = 0;
  uint64_t pendingDropMessages_ = 0;  // dropped, not yet reported
  uint64_t pendingDropBuffers_ = 0;

  LogFile output_;  // used only by the backend thread (and by stop() after join)
  std::thread thread_;
};

}  // namespace muon
