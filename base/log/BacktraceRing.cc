#include "muon/base/internal/BacktraceRing.h"

#include <mutex>

namespace muon {
namespace detail {

namespace {

struct Ring {
  std::mutex mutex;
  std::vector<std::string> slots;  // guarded by mutex; size() is the capacity
  size_t next = 0;                 // guarded by mutex; the slot the next line takes
  size_t count = 0;                // guarded by mutex; lines kept, <= slots.size()
};

Ring& ring() {
  static Ring r;
  return r;
}

}  // namespace

void backtraceLockForFork() { ring().mutex.lock(); }
void backtraceUnlockAfterFork() { ring().mutex.unlock(); }

void backtraceResize(size_t lines) {
  Ring& r = ring();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.slots.clear();
  r.slots.shrink_to_fit();
  r.slots.resize(lines);
  r.next = 0;
  r.count = 0;
}

void backtracePush(const char* line, size_t len) {
  Ring& r = ring();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.slots.empty()) return;
  r.slots[r.next].assign(line, len);
  r.next = (r.next + 1) % r.slots.size();
  if (r.count < r.slots.size()) ++r.count;
}

std::vector<std::string> backtraceTake() {
  Ring& r = ring();
  std::vector<std::string> lines;
  std::lock_guard<std::mutex> lock(r.mutex);
  lines.reserve(r.count);
  const size_t capacity = r.slots.size();
  for (size_t i = 0; i < r.count; ++i) {
    lines.push_back(std::move(r.slots[(r.next + capacity - r.count + i) % capacity]));
  }
  r.count = 0;
  return lines;
}

}  // namespace detail
}  // namespace muon
