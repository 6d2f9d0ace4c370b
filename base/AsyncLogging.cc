#include "muon/base/AsyncLogging.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>

#include <sys/mman.h>
#include <sys/prctl.h>

#include "muon/base/Timestamp.h"

namespace muon {

namespace {
constexpr int kSlotShift = 48;
constexpr uint64_t kOffsetMask = (uint64_t{1} << kSlotShift) - 1;
// A buffer's commit word: bytes in the low 40 bits, messages above them, so
// that one fetch_add records both.
constexpr int kMessageShift = 40;
constexpr uint64_t kBytesMask = (uint64_t{1} << kMessageShift) - 1;

uint64_t makeReserveWord(size_t slot) { return static_cast<uint64_t>(slot) << kSlotShift; }
}  // namespace

namespace {
// Buffers are mapped, not malloc'ed: munmap gives a burst's memory back to the
// system at once, where free() would keep it in a malloc arena. We never
// memset them; MAP_POPULATE has the kernel fault every page in at once, so
// that the producer that later fills the buffer takes no page faults.
char* mapBuffer() {
  void* p = ::mmap(nullptr, AsyncLogging::kBufferSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return static_cast<char*>(p);
}
}  // namespace

struct AsyncLogging::Buffer {
  Buffer(size_t s, char* mapped) : slot(s), data(mapped) {}
  ~Buffer() { ::munmap(data, kBufferSize); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Back to empty, before the buffer is published as current again.
  void reset() {
    committed.store(0, std::memory_order_relaxed);
    validEnd.store(kBufferSize, std::memory_order_relaxed);
    finalReserved = 0;
  }

  // Spins until every reservation made in this buffer has been committed.
  // Writers hold no lock between reserving and committing, and copy at most
  // one line in between, so the wait is short.
  void waitForWriters() const {
    for (int spins = 0; (committed.load(std::memory_order_acquire) & kBytesMask) != finalReserved;
         ++spins) {
      if (spins > 64) std::this_thread::yield();
    }
  }

  // Bytes of whole lines at the front of data (call after waitForWriters).
  size_t length() const {
    return finalReserved <= kBufferSize ? finalReserved
                                        : validEnd.load(std::memory_order_relaxed);
  }
  uint64_t messages() const { return committed.load(std::memory_order_relaxed) >> kMessageShift; }

  const size_t slot;
  char* const data;
  // Bytes reserved in this buffer when it stopped being current (set under
  // mutex_); once committed bytes reach it, no writer is left.
  uint64_t finalReserved = 0;
  // Where the line that did not fit would have started: the end of data.
  std::atomic<size_t> validEnd{kBufferSize};
  alignas(64) std::atomic<uint64_t> committed{0};
};

AsyncLogging::AsyncLogging(const std::string& basename, off_t rollSize, int flushInterval,
                           OverflowPolicy policy)
    : flushInterval_(flushInterval > 0 ? flushInterval : 1),
      policy_(policy),
      reserve_(0),
      // Only the backend thread uses it, so no lock. checkEveryN = 1: each
      // append is a whole buffer, so check the day on every one.
      output_(basename, rollSize, false, flushInterval, 1) {
  std::lock_guard<std::mutex> lock(mutex_);
  Buffer* first = takeSpare();
  reserve_.store(makeReserveWord(first->slot), std::memory_order_release);
  queued_.reserve(kMaxBuffers);
  spares_.reserve(kMaxBuffers);
}

AsyncLogging::~AsyncLogging() {
  stop();
  // Lines appended after stop(), or without start() at all, have no backend
  // to write them; they are written here, so that none is lost.
  writeLeftovers();
  for (Buffer*& b : slots_) {
    delete b;
    b = nullptr;
  }
}

void AsyncLogging::setWriteFunction(WriteFunction write) {
  std::lock_guard<std::mutex> lock(mutex_);
  assert(!running_ && "setWriteFunction must come before start()");
  output_.setWriteFunction(std::move(write));
}

void AsyncLogging::append(const char* logline, size_t len) {
  if (len == 0) return;
  if (len > kBufferSize) len = kBufferSize;
  // acquire: pairs with the release that published the buffer's slot.
  uint64_t word = reserve_.fetch_add(len, std::memory_order_acquire);
  Buffer* b = slots_[word >> kSlotShift];
  uint64_t offset = word & kOffsetMask;
  if (offset + len <= kBufferSize) {
    std::memcpy(b->data + offset, logline, len);
    b->committed.fetch_add(len + (uint64_t{1} << kMessageShift), std::memory_order_release);
    return;
  }
  appendSlow(b, offset, logline, len);
}

void AsyncLogging::appendSlow(Buffer* full, uint64_t offset, const char* logline, size_t len) {
  // The one writer whose reservation crosses the end marks where the data
  // ends; its bytes and those of every later failed reservation are committed
  // as empty, so the backend's count still adds up.
  if (offset <= kBufferSize) full->validEnd.store(offset, std::memory_order_relaxed);
  // After this commit `full` may be written out, dropped or even unmapped by
  // another thread: it must not be touched again.
  full->committed.fetch_add(len, std::memory_order_release);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (policy_ == kBlock && running_) {
      // Wait for room; someone else may retire the full buffer meanwhile.
      auto mayGo = [this] {
        return !currentIsFull() || queued_.size() + inFlight_ < kMaxPendingBuffers ||
               !running_ || stopping_;
      };
      if (!mayGo()) {
        ++producerWaits_;
        producerCond_.wait(lock, mayGo);
      }
    }
    // Whoever comes first retires it; the others find a fresh buffer.
    if (currentIsFull()) retireCurrent();
  }
  append(logline, len);
}

bool AsyncLogging::currentIsFull() const {
  // A writer only gets here after its reservation crossed the end, so the
  // current buffer is full exactly when its reserved count is past the end.
  // (Comparing buffers instead would be fooled when the full one was dropped
  // and its slot, or the Buffer itself, came back as the new current one.)
  return (reserve_.load(std::memory_order_relaxed) & kOffsetMask) > kBufferSize;
}

void AsyncLogging::retireCurrent() {
  Buffer* fresh = takeSpare();
  uint64_t old = reserve_.exchange(makeReserveWord(fresh->slot), std::memory_order_acq_rel);
  Buffer* full = slots_[old >> kSlotShift];
  full->finalReserved = old & kOffsetMask;
  queued_.push_back(full);
  // kBlock with no backend running (before start(), after stop()) cannot
  // wait for room, so it drops and counts like kDrop rather than grow
  // without bound.
  if (policy_ == kDrop || !running_) dropExcess();
  backendCond_.notify_one();
}

void AsyncLogging::dropExcess() {
  if (queued_.size() + inFlight_ <= kMaxPendingBuffers) return;
  // As muduo does: keep the first two waiting buffers, drop the rest. If the
  // backend holds so many that this is not enough, drop the newest too.
  size_t keep = std::min({size_t{2}, queued_.size(), kMaxPendingBuffers - inFlight_});
  for (size_t i = keep; i < queued_.size(); ++i) {
    Buffer* b = queued_[i];
    b->waitForWriters();  // a late writer may still be copying into it
    unreportedDroppedMessages_ += b->messages();
    ++unreportedDroppedBuffers_;
    recycle(b);
  }
  queued_.resize(keep);
}

AsyncLogging::Buffer* AsyncLogging::takeSpare() {
  Buffer* b = nullptr;
  if (!spares_.empty()) {
    b = spares_.back();
    spares_.pop_back();
  } else {
    // The backend keeps spares ready; a producer maps one only when it
    // outruns the backend. It populates the pages now, under the lock: one
    // stall of about a millisecond for this producer, instead of a page fault
    // (1-2 us here) in one line out of every ~37 for the next 4 MiB, which
    // was the whole of the p99.9 latency (2.5 us -> 0.37 us, 1 thread).
    // The other producers need this buffer anyway, so the lock costs them
    // nothing more.
    b = install(mapBuffer());
    assert(b != nullptr && "AsyncLogging: buffer bound broken");
  }
  b->reset();
  return b;
}

AsyncLogging::Buffer* AsyncLogging::install(char* mapped) {
  size_t slot = 0;
  while (slot < kMaxBuffers && slots_[slot] != nullptr) ++slot;
  if (slot == kMaxBuffers) {
    ::munmap(mapped, kBufferSize);
    return nullptr;
  }
  return slots_[slot] = new Buffer(slot, mapped);
}

void AsyncLogging::prepareSpares(std::unique_lock<std::mutex>& lock) {
  while (spares_.size() < kPreparedSpares) {
    lock.unlock();
    char* mapped = mapBuffer();  // the slow part, outside the lock
    lock.lock();
    Buffer* b = install(mapped);
    if (!b) return;
    spares_.push_back(b);
  }
}

void AsyncLogging::recycle(Buffer* b) {
  if (spares_.size() < kMaxSpares) {
    spares_.push_back(b);
  } else {
    // Give memory back after a burst.
    slots_[b->slot] = nullptr;
    delete b;
  }
}

void AsyncLogging::start() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (running_) return;
  running_ = true;
  stopping_ = false;
  backendStarted_ = false;
  thread_ = std::thread(&AsyncLogging::threadFunc, this);
  producerCond_.wait(lock, [this] { return backendStarted_; });
}

void AsyncLogging::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_ || stopping_) return;
    stopping_ = true;
    backendCond_.notify_one();
  }
  thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
  stopping_ = false;
  producerCond_.notify_all();
}

void AsyncLogging::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!running_ || stopping_) return;
  uint64_t ticket = ++flushRequested_;
  backendCond_.notify_one();
  producerCond_.wait(lock, [&] { return flushDone_ >= ticket || !running_; });
}

void AsyncLogging::requestReopen() {
  // Nothing else: no lock, no notify, so a signal handler may call it.
  reopenRequested_.store(true);
}

AsyncLogging::Stats AsyncLogging::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s;
  s.messagesDropped = messagesDropped_ + unreportedDroppedMessages_;
  s.buffersDropped = buffersDropped_ + unreportedDroppedBuffers_;
  s.producerWaits = producerWaits_;
  s.file = fileStats_;
  return s;
}

void AsyncLogging::threadFunc() {
  std::vector<Buffer*> batch;
  batch.reserve(kMaxBuffers);
  // Named for top -H, ps -L and gdb; start() returns after this, so the
  // name is there as soon as the logger is running.
  ::prctl(PR_SET_NAME, kBackendThreadName, 0, 0, 0);
  std::unique_lock<std::mutex> lock(mutex_);
  backendStarted_ = true;
  producerCond_.notify_all();
  for (;;) {
    if (queued_.empty() && !stopping_ && flushRequested_ == flushDone_) {
      backendCond_.wait_for(lock, std::chrono::seconds(flushInterval_));
    }
    bool stopNow = stopping_;
    uint64_t flushTarget = flushRequested_;
    // Take the partly filled current buffer too: lines must not wait longer
    // than flushInterval, and stop/flush must see everything before them.
    Dropped dropped = takeBatch(batch);
    // Taken with the flush target, so a flush() after requestReopen() sees
    // the new file. Any file started while this batch is written was started
    // after the request, so it serves.
    bool reopen = reopenRequested_.exchange(false);
    lock.unlock();

    uint64_t filesBefore = output_.stats().filesCreated;
    writeBatch(batch, dropped);
    if (reopen && output_.stats().filesCreated == filesBefore) output_.rollFile();
    LogFile::Stats fileStats = output_.stats();

    lock.lock();
    fileStats_ = fileStats;
    for (Buffer* b : batch) recycle(b);
    batch.clear();
    inFlight_ = 0;
    flushDone_ = flushTarget;
    producerCond_.notify_all();
    if (stopNow && queued_.empty()) break;
    prepareSpares(lock);
  }
}

AsyncLogging::Dropped AsyncLogging::takeBatch(std::vector<Buffer*>& batch) {
  // The backend never waits for room: only it can make room. (With kBlock
  // this may queue one buffer over the bound, briefly.)
  if ((reserve_.load(std::memory_order_relaxed) & kOffsetMask) != 0) retireCurrent();
  batch.swap(queued_);
  inFlight_ = batch.size();
  Dropped dropped{unreportedDroppedBuffers_, unreportedDroppedMessages_};
  buffersDropped_ += dropped.buffers;
  messagesDropped_ += dropped.messages;
  unreportedDroppedBuffers_ = unreportedDroppedMessages_ = 0;
  return dropped;
}

void AsyncLogging::writeLeftovers() {
  std::vector<Buffer*> batch;
  Dropped dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped = takeBatch(batch);
  }
  if (batch.empty() && dropped.buffers == 0) return;
  writeBatch(batch, dropped);
  std::lock_guard<std::mutex> lock(mutex_);
  for (Buffer* b : batch) recycle(b);
  inFlight_ = 0;
}

void AsyncLogging::writeBatch(const std::vector<Buffer*>& batch, Dropped dropped) {
  if (dropped.buffers > 0) {
    char line[256];
    int n = std::snprintf(line, sizeof line,
                          "Dropped log messages at %s, %llu larger buffers (%llu messages)\n",
                          Timestamp::now().toFormattedString().c_str(),
                          static_cast<unsigned long long>(dropped.buffers),
                          static_cast<unsigned long long>(dropped.messages));
    std::fputs(line, stderr);
    output_.append(line, static_cast<size_t>(n));
  }
  for (Buffer* b : batch) {
    b->waitForWriters();
    output_.append(b->data, b->length());
  }
  output_.flush();
}

}  // namespace muon
