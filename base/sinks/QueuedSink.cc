#include "muon/base/QueuedSink.h"

#include <chrono>
#include <cstring>

#include "muon/base/LogRecord.h"

namespace muon {

char* QueuedSink::Lines::add(size_t size, bool isRecord) {
  const size_t offset = bytes.size();
  bytes.resize(offset + size);
  lines.push_back(Line{offset, size, isRecord});
  return bytes.data() + offset;
}

void QueuedSink::Lines::dropFirst() {
  ++first;
  // The dropped lines' bytes are moved over once they are half the lines
  // and a good many: amortized one copy of a line per line dropped.
  if (first >= 1024 && first * 2 >= lines.size()) {
    const size_t from = first < lines.size() ? lines[first].offset : bytes.size();
    bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(from));
    lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(first));
    for (Line& line : lines) line.offset -= from;
    first = 0;
  }
}

void QueuedSink::Lines::clear() {
  bytes.clear();
  lines.clear();
  first = 0;
}

QueuedSink::QueuedSink(const QueuedSinkOptions& options, bool dropOldest)
    : options_(options), dropOldest_(dropOldest) {}

QueuedSink::~QueuedSink() = default;

void QueuedSink::append(const LogRecord& record) {
  enqueue(detail::storedSize(record), true,
          [&record](char* out) { detail::storeRecord(record, out); });
}

void QueuedSink::append(const char* line, size_t len) {
  enqueue(len, false, [line, len](char* out) { std::memcpy(out, line, len); });
}

std::unique_lock<std::mutex> QueuedSink::lockBriefly() {
  // Nobody holds mutex_ for more than a few moves (the sender swaps the
  // queue whole): a logging thread that finds it taken spins the length of
  // that rather than sleeping in the kernel and waiting to be woken.
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  for (int i = 0; !lock.owns_lock() && i < 2000; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    lock.try_lock();
  }
  if (!lock.owns_lock()) lock.lock();  // the holder was preempted
  return lock;
}

template <typename Write>
void QueuedSink::enqueue(size_t size, bool isRecord, Write write) {
  bool wasEmpty;
  {
    std::unique_lock<std::mutex> lock = lockBriefly();
    if (queue_.size() >= options_.queueCapacity) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      if (!dropOldest_ || queue_.empty()) return;
      // Its ticket stays issued: the sender marks it done with the batch it
      // would have been in.
      queue_.dropFirst();
    }
    wasEmpty = queue_.empty();
    write(queue_.add(size, isRecord));
    tickets_.issue();
  }
  // The sender waits only for an empty queue to fill; it looks again after
  // every batch, so later lines need no wake-up (and no futex call).
  if (wasEmpty) senderCond_.notify_one();
}

QueuedSinkStats QueuedSink::counts() const {
  return QueuedSinkStats{sent_.load(std::memory_order_relaxed),
                         dropped_.load(std::memory_order_relaxed),
                         lost_.load(std::memory_order_relaxed)};
}

void QueuedSink::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  tickets_.waitFor(lock, tickets_.newest(), std::chrono::milliseconds(options_.flushTimeoutMs));
}

void QueuedSink::stopSender() {
  flush();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  senderCond_.notify_one();
  if (sender_.joinable()) sender_.join();
}

bool QueuedSink::takeBatch(Lines* batch) {
  std::unique_lock<std::mutex> lock(mutex_);
  senderCond_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
  // Lines gather for a moment before they are taken: the lock changes hands
  // once per kGatherMs, not once per line, so that a logging thread seldom
  // finds it held (by a sender the scheduler may have preempted with it).
  senderCond_.wait_for(lock, std::chrono::milliseconds(kGatherMs), [&] { return stopping_.load(); });
  if (stopping_) {
    // stopSender() has waited what it would: what is still queued is lost.
    lost_.fetch_add(queue_.size(), std::memory_order_relaxed);
    queue_.clear();
    tickets_.markDone(tickets_.newest());
    return false;
  }
  // The emptied buffers of the last batch become the queue's.
  std::swap(*batch, queue_);
  batchEnd_ = tickets_.newest();
  return true;
}

void QueuedSink::batchDone(Lines* batch) {
  batch->clear();
  std::lock_guard<std::mutex> lock(mutex_);
  tickets_.markDone(batchEnd_);
}

void QueuedSink::rest(int ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  senderCond_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stopping_.load(); });
}

}  // namespace muon
