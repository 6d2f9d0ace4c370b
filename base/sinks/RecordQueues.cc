#include "muon/base/internal/RecordQueues.h"

#include <algorithm>
#include <utility>

#include "muon/base/CurrentThread.h"
#include "muon/base/internal/Statement.h"

namespace muon {

using detail::RecordQueue;

namespace {

// A consumer gives a queue's bytes back this often while it drains it, so
// that a producer waiting for room does not wait for the whole queue.
constexpr uint64_t kReleaseEvery = 64 * 1024;

size_t roundUpToPowerOfTwo(size_t n) {
  size_t p = RecordQueues::kMinQueueBytes;
  while (p < n) p *= 2;
  return p;
}

// The queues this thread holds, one per sink it has logged to. A queue is
// closed when the thread exits (the sink then frees it once drained); one
// whose sink is gone (the thread holds the last reference) is dropped the
// next time the thread looks for a queue.
struct ThreadQueues {
  std::vector<std::pair<uint64_t, std::shared_ptr<RecordQueue>>> queues;
  ~ThreadQueues();
};
// Set once this thread's ThreadQueues is destroyed: a statement in a later
// thread_local destructor writes text instead of making a queue again.
thread_local bool t_queuesGone = false;
thread_local ThreadQueues t_queues;

ThreadQueues::~ThreadQueues() {
  t_queuesGone = true;
  detail::t_recordQueue = detail::ThreadRecordQueue();
  detail::forgetThreadRoute();
  for (auto& entry : queues) entry.second->close();
}

}  // namespace

struct RecordQueues::Source {
  std::shared_ptr<RecordQueue> queue;
  detail::LinePrefix prefix;  // for the queue's thread
  // While draining: the next record, where it is, and where the drain stops.
  const detail::RecordHeader* head = nullptr;
  uint64_t position = 0;
  uint64_t end = 0;
  uint64_t released = 0;
};

RecordQueues::RecordQueues(detail::RecordSink* sink, size_t queueBytes, Writer writer,
                           LineFormat format)
    : sink_(sink),
      queueBytes_(roundUpToPowerOfTwo(queueBytes)),
      writer_(std::move(writer)),
      formatter_(format),
      lines_(new char[kLineBufferSize]) {
  // Resident before the first line: the consumer never faults on it either.
  std::fill_n(lines_.get(), kLineBufferSize, '\0');
}

RecordQueues::~RecordQueues() = default;

RecordQueue* RecordQueues::existingQueueForThisThread() {
  if (detail::t_recordQueue.sinkId == sink_->id()) return detail::t_recordQueue.queue;
  if (t_queuesGone) return nullptr;
  for (auto& entry : t_queues.queues) {
    if (entry.first == sink_->id()) return entry.second.get();
  }
  return nullptr;
}

RecordQueue* RecordQueues::queueForThisThread() {
  if (t_queuesGone) return nullptr;
  RecordQueue* queue = existingQueueForThisThread();
  if (queue == nullptr) {
    auto& held = t_queues.queues;
    // Queues of sinks that are gone: only this thread holds them.
    held.erase(std::remove_if(held.begin(), held.end(),
                              [](const auto& entry) { return entry.second.use_count() == 1; }),
               held.end());
    std::shared_ptr<RecordQueue> made;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      made = makeQueue();
    }
    if (!made) return nullptr;
    held.emplace_back(sink_->id(), made);
    queue = made.get();
  }
  detail::t_recordQueue.sinkId = sink_->id();
  detail::t_recordQueue.queue = queue;
  return queue;
}

std::shared_ptr<RecordQueue> RecordQueues::makeQueue() {
  std::shared_ptr<RecordQueue> queue;
  try {
    queue = std::make_shared<RecordQueue>(queueBytes_, CurrentThread::tid(),
                                          std::string(CurrentThread::tidString()));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  queue->setSink(sink_);
  auto source = std::make_unique<Source>();
  source->queue = queue;
  sources_.push_back(std::move(source));
  return queue;
}

bool RecordQueues::hasRoom(const RecordQueue& queue) { return queue.producerFree() >= queue.capacity() / 2; }

void RecordQueues::takeSources(std::vector<Source*>* sources) {
  sources->clear();
  std::lock_guard<std::mutex> lock(mutex_);
  auto drained = [](const std::unique_ptr<Source>& s) {
    // Closed first: no record comes after a close, so one that is read up
    // to its end now stays empty.
    return s->queue->closed() && s->queue->readPosition() == s->queue->committed();
  };
  sources_.erase(std::remove_if(sources_.begin(), sources_.end(), drained), sources_.end());
  for (auto& s : sources_) sources->push_back(s.get());
}

size_t RecordQueues::drain(const std::function<void()>& roomMade, detail::LineTap* tap) {
  takeSources(&draining_);
  // The sources with records, each at its first.
  size_t active = 0;
  heldFor_ = 0;
  for (Source* s : draining_) {
    s->end = s->queue->committed();
    s->position = s->queue->readPosition();
    // Records behind a hold wait for the shared buffers it names
    // (RecordQueue::leaveShared).
    uint64_t holdAt;
    uint64_t holdFor;
    s->queue->hold(&holdAt, &holdFor);
    if (holdAt >= s->position && holdAt < s->end && !sink_->writtenThrough(holdFor)) {
      s->end = holdAt;
      if (heldFor_ == 0 || holdFor < heldFor_) heldFor_ = holdFor;
    }
    s->released = s->position;
    s->head = s->queue->recordAt(&s->position, s->end);
    if (s->head != nullptr) {
      draining_[active++] = s;
    } else if (s->position != s->released) {
      // Only a wrap marker lay before the end (a lap begun with no record
      // in it yet: RecordQueue::reopenLane): its bytes are read too, so
      // that a closed queue that ends there is seen drained.
      s->queue->release(s->position);
      s->released = s->position;
      if (waiters_.load(std::memory_order_seq_cst) > 0) roomMade();
    }
  }
  size_t formatted = 0;
  while (active > 0) {
    // The earliest head; threads are few, so a scan.
    size_t first = 0;
    for (size_t i = 1; i < active; ++i) {
      if (draining_[i]->head->key < draining_[first]->head->key) first = i;
    }
    Source* s = draining_[first];
    if (kLineBufferSize - lineLength_ < formatter_.maxLine()) writeLines();
    lineLength_ += formatter_.format(*s->head, s->prefix, s->queue->tid(), s->queue->tidString(),
                                     lines_.get() + lineLength_, tap);
    ++formatted;
    s->position += s->head->size;
    const detail::RecordHeader* next = s->queue->recordAt(&s->position, s->end);
    const bool done = next == nullptr;
    if (done || s->position - s->released >= kReleaseEvery) {
      s->queue->release(s->position);
      s->released = s->position;
      // Pairs with addWaiter() (both seq_cst): either the waiter sees the
      // room, or this sees the waiter.
      if (waiters_.load(std::memory_order_seq_cst) > 0) roomMade();
    }
    if (done) {
      draining_[first] = draining_[--active];
    } else {
      s->head = next;
    }
  }
  return formatted;
}

void RecordQueues::writeLines() {
  if (lineLength_ == 0) return;
  writer_(lines_.get(), lineLength_);
  lineLength_ = 0;
}

}  // namespace muon
