#include "muon/base/internal/RecordQueue.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>

namespace muon {
namespace detail {

namespace {

std::atomic<uint64_t> g_nextSinkId{1};

// Resident from the start (MAP_POPULATE), so that no statement faults a page in.
char* mapResident(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return static_cast<char*>(p);
}

constexpr size_t kHugePage = size_t{2} << 20;

// A ring of whole huge pages, resident, on a huge page's boundary and
// asked for in huge pages (MADV_HUGEPAGE: the kernel's transparent huge
// pages in their "madvise" mode, and "always"; a hint it may not take, the
// ring then working in small pages). With small pages the ring is far more
// pages than the TLB keeps, and a statement that starts one waits for its
// translation, which sets the slow tail of a statement's latency
// (docs/logging.md).
char* mapResidentInHugePages(size_t bytes) {
  // A huge page more than the ring, so that an aligned stretch lies inside;
  // the rest is given back. Touched only after the advice: MAP_POPULATE
  // would fault small pages in first.
  void* p = ::mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  char* const mapped = static_cast<char*>(p);
  char* const ring =
      reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(mapped) + kHugePage - 1) & ~(kHugePage - 1));
  const size_t before = static_cast<size_t>(ring - mapped);
  if (before != 0) ::munmap(mapped, before);
  if (before != kHugePage) ::munmap(ring + bytes, kHugePage - before);
  ::madvise(ring, bytes, MADV_HUGEPAGE);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (size_t at = 0; at < bytes; at += page) static_cast<volatile char*>(ring)[at] = 0;
  return ring;
}

}  // namespace

RecordSink::RecordSink() : id_(g_nextSinkId.fetch_add(1, std::memory_order_relaxed)) {}

RecordQueue::RecordQueue(size_t capacity, int tid, std::string tidString)
    : data_(capacity % kHugePage == 0 ? mapResidentInHugePages(capacity) : mapResident(capacity)),
      capacity_(capacity),
      mask_(capacity - 1),
      half_(capacity / 2),
      quarter_(capacity / 4),
      tid_(tid),
      tidString_(std::move(tidString)) {
  lane_.queue = this;
  lane_.published.store(data_, std::memory_order_relaxed);
  refreshLane();
}

RecordQueue::~RecordQueue() { ::munmap(data_, capacity_); }

char* RecordQueue::reserveSlow(size_t size) {
  for (;;) {
    cachedRead_ = read_.load(std::memory_order_acquire);
    const size_t at = static_cast<size_t>(position()) & mask_;
    const size_t tail = capacity_ - at;
    const size_t need = at + size <= capacity_ ? size : tail + size;
    const uint64_t used = position() - cachedRead_;
    if (used + need <= half_) {
      wakeSent_ = false;
    } else if (!wakeSent_) {
      wakeSent_ = true;
      sink_->wake();
    }
    // Less than a full lap ahead of the consumer, which tells positions
    // a lap apart by no more than their place in the ring (committed()).
    if (used + need < capacity_) {
      // The record after the marker, at the ring's start, is published by
      // commit(); the lap begins whether the lane is busy or not.
      if (need != size) wrapLap(at);
      refreshLane();
      return data_ + (static_cast<size_t>(position()) & mask_);
    }
    if (!sink_->waitForRoom(*this)) return nullptr;
  }
}

bool RecordQueue::leaveShared() {
  if (!sink_->writtenThrough(sharedThrough_)) {
    // Its lines still wait in the shared buffers, those of the hold before
    // are written, and the ring is at most an eighth full (sharedGoesOn()
    // said so). Its later shared lines must go after the records it now
    // commits: into a later buffer, which the sink writes after those records.
    if (!sink_->sealShared(sharedThrough_)) return false;
    // position(): where the next record begins (at the ring's end, the
    // same number as the next lap's start).
    holdPosition_.store(position(), std::memory_order_relaxed);
    holdSequence_.store(sharedThrough_, std::memory_order_release);
  }
  shared_ = false;
  refreshLane();
  return true;
}

void RecordQueue::wrapLap(size_t at) {
  const uint32_t wrap = 0;
  std::memcpy(data_ + at, &wrap, sizeof wrap);
  // Published now: the marker is written, no record after it yet counted.
  lane_.published.store(data_ + capacity_, std::memory_order_release);
  settleLap();
}

bool RecordQueue::reopenLane() {
  if (lane_.limit == nullptr && !shared_ && inPlace_ == nullptr) {
    // Past the lap's last place for a record of the largest size: the rest
    // of the ring becomes a wrap marker if a record after it still leaves
    // the ring no fuller than a statement may (wrapLap, as reserveSlow
    // wraps, but before the record is known).
    const uint64_t position = this->position();
    const size_t tail = capacity_ - (static_cast<size_t>(position) & mask_);
    if (tail < RecordLane::kMaxStatement &&
        position + tail + RecordLane::kMaxStatement - cachedRead_ <= recordRoom()) {
      wrapLap(static_cast<size_t>(position) & mask_);
      refreshLane();  // the lane starts at the ring's start
    }
  }
  return lane_.write <= lane_.limit;
}

void RecordQueue::refreshLane() {
  if (lane_.busy()) return;
  settleLap();
  const uint64_t position = this->position();
  const uint64_t lapStart = position & ~static_cast<uint64_t>(mask_);
  char* const write = data_ + (position - lapStart);
  lane_.write = write;
  constexpr size_t kMax = RecordLane::kMaxStatement;
  const bool formatting = shared_ || crowded_;
  lane_.openMark = formatting ? RecordLane::kLaneFormat : RecordLane::kLaneOpen;
  if (formatting) {
    // Records are made into lines where they are written, never published,
    // so each starts at `write`, where one of kMax bytes must be contiguous
    // and clear of what the consumer has yet to read.
    const bool room =
        position - lapStart + kMax <= capacity_ && position + kMax - cachedRead_ <= capacity_;
    lane_.limit = room && inPlace_ == nullptr ? write : nullptr;
    return;
  }
  // The last position a record of kMax bytes may start at: contiguous
  // before the ring's end, and the ring no fuller than recordRoom() after it.
  const uint64_t byEnd = lapStart + capacity_ - kMax;
  const uint64_t byRoom = cachedRead_ + recordRoom() - kMax;
  const uint64_t last = byEnd < byRoom ? byEnd : byRoom;
  lane_.limit = inPlace_ != nullptr || quarter_ < kMax || last < position
                    ? nullptr
                    : data_ + (last - lapStart);
}

bool RecordQueue::appendText(const char* line, size_t len, uint64_t key) {
  const size_t size = recordSize(len);
  char* p = reserve(size);
  if (p == nullptr) return false;
  RecordHeader header{};
  header.size = static_cast<uint32_t>(size);
  header.length = static_cast<uint16_t>(len);
  header.kind = RecordHeader::kText;
  header.key = key;
  std::memcpy(p, &header, sizeof header);
  std::memcpy(p + sizeof header, line, len);
  commit(size);
  return true;
}

const RecordHeader* RecordQueue::recordAt(uint64_t* position, uint64_t end) const {
  if (*position == end) return nullptr;
  size_t at = static_cast<size_t>(*position) & mask_;
  uint32_t size;
  std::memcpy(&size, data_ + at, sizeof size);
  if (size == 0) {
    // reserveSlow publishes a marker before the record after it: what is at
    // the ring's start may still be the last lap's.
    *position += capacity_ - at;
    if (*position == end) return nullptr;
    at = 0;
  }
  return reinterpret_cast<const RecordHeader*>(data_ + at);
}

}  // namespace detail
}  // namespace muon
