// TimerId: names a timer made by EventLoop::runAt/runAfter/runEvery, for
// EventLoop::cancel. A value type; copies name the same timer. A default
// TimerId names no timer (cancelling it does nothing).
#pragma once

#include <cstdint>

namespace muon {
namespace net {

class TimerId {
 public:
  TimerId() = default;
  explicit TimerId(int64_t sequence) : sequence_(sequence) {}

  int64_t sequence() const { return sequence_; }
  bool valid() const { return sequence_ > 0; }

  friend bool operator==(TimerId a, TimerId b) { return a.sequence_ == b.sequence_; }
  friend bool operator!=(TimerId a, TimerId b) { return !(a == b); }

 private:
  // Unique in the process and never reused, so a stale TimerId can never
  // cancel a newer timer, and no Timer* is needed beside it.
  int64_t sequence_ = 0;
};

}  // namespace net
}  // namespace muon
