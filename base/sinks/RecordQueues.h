// RecordQueues: the per-thread record queues of one sink that formats
// statements' records itself (AsyncLogging), and their draining into text.
//
// Each thread that logs to the sink gets a RecordQueue (RecordQueue.h) on its
// first statement, registered here and held by the thread until it exits;
// the queue is then drained and freed. drain() formats every record that was
// in the queues when it began, merged across threads in the order of their
// keys (the counter each statement read: the order of the statements in
// time, as far as the counter shows it); one thread's records keep their
// order. The lines go into a line buffer of kLineBufferSize bytes, handed to
// the writer whenever it fills and when writeLines() is called. A thread
// back from the shared mode may hold its later records until its lines in
// the sink's shared buffers are written (RecordQueue::leaveShared): the
// sink then drains again, before it writes any later shared buffer.
//
// Thread safety: queueForThisThread() and existingQueueForThisThread() from
// any thread (each for itself); drain(), writeLines(), bufferedBytes() from
// one consuming thread at a time.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "muon/base/internal/LineLayout.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/internal/RecordQueue.h"

namespace muon {

class RecordQueues {
 public:
  static constexpr size_t kLineBufferSize = 4 * 1024 * 1024;
  // The smallest queue (per thread); the default is AsyncLogging's
  // Options::threadQueueBytes.
  static constexpr size_t kMinQueueBytes = 64 * 1024;

  // `sink` is what the queues report to (their RecordSink); `queueBytes`
  // is rounded up to a power of two, at least kMinQueueBytes. `writer`
  // takes whole lines, from the consuming thread, in `format` (the
  // records become text lines or JSON lines, RecordFormatter.h).
  using Writer = std::function<void(const char* lines, size_t len)>;
  RecordQueues(detail::RecordSink* sink, size_t queueBytes, Writer writer,
               LineFormat format = LineFormat::kText);
  ~RecordQueues();
  RecordQueues(const RecordQueues&) = delete;
  RecordQueues& operator=(const RecordQueues&) = delete;

  // ---- producers ----
  // The calling thread's queue, made and registered on the first call (the
  // thread's cached queue, detail::t_recordQueue, then names it); nullptr
  // if no memory can be had, or while the thread is exiting.
  detail::RecordQueue* queueForThisThread();
  // The calling thread's queue if it has one, else nullptr.
  detail::RecordQueue* existingQueueForThisThread();

  // For the sink's waitForRoom: whether `queue` has room again (half of it
  // free), and the waiters drain() must wake when it makes room.
  static bool hasRoom(const detail::RecordQueue& queue);
  void addWaiter() { waiters_.fetch_add(1, std::memory_order_seq_cst); }
  void removeWaiter() { waiters_.fetch_sub(1, std::memory_order_relaxed); }

  // ---- the consumer ----
  // Formats the records committed before the call, up to any hold
  // (RecordQueue::hold) whose shared buffers are not yet written; returns
  // how many. `roomMade` is called (no lock held) when a queue a producer
  // waits on has been given room. A `tap` takes each record's parts too.
  size_t drain(const std::function<void()>& roomMade, detail::LineTap* tap = nullptr);
  // The earliest shared buffer the last drain() found records held behind
  // (its sequence number), 0 if none: once it is written, drain again, before
  // any later buffer is written.
  uint64_t heldFor() const { return heldFor_; }
  // Hands the formatted lines to the writer.
  void writeLines();
  size_t bufferedBytes() const { return lineLength_; }

 private:
  struct Source;

  // Registers a new queue for the calling thread. mutex_ held.
  std::shared_ptr<detail::RecordQueue> makeQueue();
  // The registered sources now, without the closed and empty ones (freed).
  void takeSources(std::vector<Source*>* sources);

  detail::RecordSink* const sink_;
  const size_t queueBytes_;
  const Writer writer_;

  std::mutex mutex_;
  std::vector<std::unique_ptr<Source>> sources_;  // guarded by mutex_
  std::atomic<int> waiters_{0};

  // The consumer's.
  detail::RecordFormatter formatter_;
  std::unique_ptr<char[]> lines_;
  size_t lineLength_ = 0;
  std::vector<Source*> draining_;
  uint64_t heldFor_ = 0;
};

}  // namespace muon
