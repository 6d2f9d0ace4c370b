// QueuedSink: the base of muon's network sinks (SyslogSink, JournaldSink):
// what logging threads call, and the queue between them and the sink's one
// sender thread. A logging thread never waits for I/O: append() copies the
// record or line into a bounded queue under a mutex that the sender holds
// only to swap the queue for its emptied batch (at most once a
// millisecond: lines gather for kGatherMs), and that append() spins on for
// a moment before sleeping. The two buffers are reused, so once they have
// grown to the largest batch append() allocates nothing (no malloc lock to
// wait for).
//
// A sink derives from it, starts its sender in its constructor and stops
// it first thing in its destructor:
//
//   MySink::MySink(...) : QueuedSink(options, dropOldest) { startSender([this] { senderLoop(); }); }
//   MySink::~MySink() { stopSender(); closeSocket(); }
//   void MySink::senderLoop() {
//     Lines batch;
//     while (takeBatch(&batch)) {
//       send the batch's lines from batch.first on; countSent(n), countLost(the rest);
//       batchDone(&batch);
//       if (it failed) rest(retryMs);
//     }
//   }
//
// Thread safety: append(), flush() and the counts from any thread; the
// members the comments call the sender's from the sender thread only;
// startSender()/stopSender() from the sink's constructor and destructor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "muon/base/internal/FlushTickets.h"

namespace muon {

struct LogRecord;

// The options every queued sink has (SyslogOptions, JournaldOptions).
struct QueuedSinkOptions {
  // Lines waiting for the sender; past that, append() drops one (which one:
  // the sink's options say). 10,000 lines is a few MB at most, and seconds
  // of a busy server's output.
  size_t queueCapacity = 10000;
  // The most one send may wait for a daemon that does not take it (not
  // reading, or its buffers full) before the sender counts the daemon
  // unreachable. Bounds the destructor too.
  int sendTimeoutMs = 1000;
  // flush() waits at most this long: a FATAL line must not hang on a dead
  // or stalled daemon. So does the destructor, before it stops the sender
  // and counts what is left as lost.
  int flushTimeoutMs = 1000;
};

// The counts every queued sink has (SyslogSink::Stats, JournaldSink::Stats).
struct QueuedSinkStats {
  uint64_t sent = 0;     // lines the daemon's socket took
  uint64_t dropped = 0;  // lines dropped because the queue was full
  uint64_t lost = 0;     // lines not sent: the daemon missing, refusing or not reading
};

class QueuedSink {
 public:
  QueuedSink(const QueuedSink&) = delete;
  QueuedSink& operator=(const QueuedSink&) = delete;

  // Queues one record (Logger::attach calls this); if the queue is full,
  // drops one line (counted), as the sink's options say.
  void append(const LogRecord& record);
  // Queues a line that did not come from Logger (ending in '\n' or not).
  void append(const char* line, size_t len);
  // Waits until every line queued before the call has been sent or counted
  // (lost, or dropped by a full queue), or flushTimeoutMs has passed.
  void flush();

 protected:
  // Lines in order, their bytes one after another: a stored record
  // (storeRecord, LogRecord.h) or a line that did not come from Logger.
  struct Lines {
    struct Line {
      size_t offset;
      size_t size;
      bool isRecord;
    };
    std::vector<char> bytes;
    std::vector<Line> lines;
    size_t first = 0;  // lines before it were dropped by a full queue

    size_t size() const { return lines.size() - first; }
    bool empty() const { return size() == 0; }
    const char* data(const Line& line) const { return bytes.data() + line.offset; }
    // Room for a line of `size` bytes at the end; where to write it.
    char* add(size_t size, bool isRecord);
    // Drops the oldest line; its bytes go once they are most of the buffer.
    void dropFirst();
    void clear();
  };

  // `dropOldest`: a full queue drops its oldest line for the new one;
  // false, the new one.
  QueuedSink(const QueuedSinkOptions& options, bool dropOldest);
  // The sink's destructor has called stopSender().
  ~QueuedSink();

  // Starts the sender thread, running `loop`.
  template <typename Loop>
  void startSender(Loop loop) {
    sender_ = std::thread(std::move(loop));
  }
  // Waits for the queue (flush()), then tells the sender to stop and joins
  // it: takeBatch() returns false, and the sender's I/O under way (it checks
  // stopping() between sends) is its last.
  void stopSender();

  // sent, dropped and lost, for the sink's stats().
  QueuedSinkStats counts() const;
  // The sender's: `n` more lines went, or were lost.
  void countSent(uint64_t n) { sent_.fetch_add(n, std::memory_order_relaxed); }
  void countLost(uint64_t n) { lost_.fetch_add(n, std::memory_order_relaxed); }

  // The sender's. Waits for lines, lets them gather for kGatherMs, and
  // swaps them into `batch` (which must be empty: batchDone()); true. Once
  // the sink is stopping, false: the lines still queued are counted lost
  // and their flushes return.
  bool takeBatch(Lines* batch);
  // The sender's: the batch taken last is done (sent or counted); flushes
  // waiting for it return. Empties `batch` for the next takeBatch().
  void batchDone(Lines* batch);
  // The sender's: waits `ms` milliseconds, or less if the sink stops.
  void rest(int ms);
  // Whether stopSender() has stopped waiting for the sender: start no more
  // I/O.
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }

 private:
  // How long the sender lets lines gather before it takes them.
  static constexpr int kGatherMs = 1;
  // Queues a line of `size` bytes, written by `write` into the room made
  // for it; if the queue is full, drops it or the oldest.
  template <typename Write>
  void enqueue(size_t size, bool isRecord, Write write);
  // mutex_, spinning a moment before sleeping for it.
  std::unique_lock<std::mutex> lockBriefly();

  const QueuedSinkOptions options_;
  const bool dropOldest_;
  std::mutex mutex_;
  std::condition_variable senderCond_;  // a line queued, or stop
  Lines queue_;                         // guarded by mutex_
  FlushTickets tickets_;                // guarded by mutex_: one per line queued
  uint64_t batchEnd_ = 0;               // the sender's: the last ticket in its batch
  // Set under mutex_ (the sender waits on it) but read by the sender
  // between sends too.
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> lost_{0};
  std::thread sender_;
};

}  // namespace muon
