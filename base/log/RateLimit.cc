#include "muon/base/internal/RateLimit.h"

#include "muon/base/LogStream.h"
#include "muon/base/Logging.h"

namespace muon {
namespace detail {

namespace {
thread_local uint64_t t_suppressed = 0;
}  // namespace

void noteSuppressed(uint64_t count) { t_suppressed = count; }

LogStream& operator<<(LogStream& stream, SuppressedNote) {
  if (t_suppressed != 0) {
    stream << '[' << t_suppressed << " suppressed] ";
    t_suppressed = 0;
  }
  return stream;
}

bool EveryT::admit(double seconds) {
  // Up to ~30,000 years; NaN and anything <= 0 mean no limit.
  const int64_t period = seconds > 0 && seconds < 1e12
                             ? static_cast<int64_t>(seconds * Timestamp::kMicroSecondsPerSecond)
                             : 0;
  const int64_t now = Logger::now().microSecondsSinceEpoch();
  int64_t next = nextMicros_.load(std::memory_order_relaxed);
  // A clock stepped back by more than a period must not silence the
  // statement until it catches up again.
  const bool steppedBack = next != INT64_MIN && now < next - period;
  if (period > 0 && now < next && !steppedBack) {
    suppressed_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // One of the threads that find the interval over wins; the others count
  // as suppressed.
  if (period > 0 &&
      !nextMicros_.compare_exchange_strong(next, now + period, std::memory_order_relaxed)) {
    suppressed_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  noteSuppressed(suppressed_.exchange(0, std::memory_order_relaxed));
  return true;
}

}  // namespace detail
}  // namespace muon
