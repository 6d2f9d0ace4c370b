// Conditional and rate-limited log statements, glog's forms:
//
//   LOG_IF(WARN, queue.size() > 1000) << "queue " << queue.size();
//   LOG_EVERY_N(INFO, 100) << "accepted " << n;        // 1st, 101st, 201st ... call
//   LOG_FIRST_N(WARN, 5) << "odd header " << h;        // the first 5 calls only
//   LOG_EVERY_T(ERROR, 2.5) << "backend down";        // at most one line per 2.5 s
//
// The first argument is a level name: TRACE, DEBUG, INFO, WARN, ERROR, FATAL.
// The level is checked first: a disabled level costs what a disabled LOG_*
// costs, and neither the condition, the limiter nor the << operands run.
// LOG_IF evaluates its condition once, and the << operands only if it holds.
//
// Each LOG_EVERY_N / LOG_FIRST_N / LOG_EVERY_T statement has its own limiter,
// shared by every thread that runs it: one relaxed atomic operation for a
// suppressed call, no lock. A line written after suppressed calls starts
// with how many: "[99 suppressed] accepted 4242". For LOG_EVERY_N that is the
// n-1 calls between two written lines in the order the calls were counted;
// for LOG_EVERY_T, the calls suppressed since the previous line's note (one
// racing with the writer may fall in either line, never in both).
//
//   n <= 0 (EVERY_N, FIRST_N): the statement writes nothing.
//   seconds <= 0 (EVERY_T):    every call writes.
// LOG_EVERY_T reads the Logger's clock (Logger::setClock); if that clock
// steps back by more than the interval, the next call writes.
//
// This is an internal header, included by Logging.h: include that.
#pragma once

#include <atomic>
#include <cstdint>

namespace muon {

class LogStream;

namespace detail {

// Out of line: the admitted calls only, which then format a whole line.
// Records, for this thread's next SuppressedNote, how many calls were
// suppressed before the one being admitted.
void noteSuppressed(uint64_t count);

// Streamed right after the header of an admitted line: writes
// "[N suppressed] " if the limiter that admitted it had suppressed N > 0
// calls. Set and read by the same thread within one statement, before any
// of the user's << operands run.
struct SuppressedNote {};
LogStream& operator<<(LogStream& stream, SuppressedNote);

class EveryN {
 public:
  constexpr EveryN() = default;
  EveryN(const EveryN&) = delete;
  EveryN& operator=(const EveryN&) = delete;

  bool admit(long long n) {
    if (n <= 0) return false;
    const uint64_t period = static_cast<uint64_t>(n);
    const uint64_t call = calls_.fetch_add(1, std::memory_order_relaxed);
    if (call % period != 0) return false;
    noteSuppressed(call == 0 ? 0 : period - 1);
    return true;
  }

 private:
  std::atomic<uint64_t> calls_{0};
};

class FirstN {
 public:
  constexpr FirstN() = default;
  FirstN(const FirstN&) = delete;
  FirstN& operator=(const FirstN&) = delete;

  bool admit(long long n) {
    if (n <= 0) return false;
    const uint64_t limit = static_cast<uint64_t>(n);
    // Past the limit a call only reads: the counter stops moving, so a hot
    // statement does not keep its cache line bouncing between cores.
    if (calls_.load(std::memory_order_relaxed) >= limit) return false;
    return calls_.fetch_add(1, std::memory_order_relaxed) < limit;
  }

 private:
  std::atomic<uint64_t> calls_{0};
};

class EveryT {
 public:
  constexpr EveryT() = default;
  EveryT(const EveryT&) = delete;
  EveryT& operator=(const EveryT&) = delete;

  bool admit(double seconds);  // RateLimit.cc

 private:
  // When the next line may be written (microseconds since the epoch, on the
  // Logger's clock); INT64_MIN before the first.
  std::atomic<int64_t> nextMicros_{INT64_MIN};
  std::atomic<uint64_t> suppressed_{0};
};

}  // namespace detail
}  // namespace muon

// This statement's limiter: a static in a lambda of its own, so one per
// statement, constant-initialized (no guard on the path).
#define MUON_RATE_LIMITER(Type)                           \
  ([]() -> ::muon::detail::Type& {                        \
    static ::muon::detail::Type muon_limiter;             \
    return muon_limiter;                                  \
  }())

#define LOG_IF(level, condition) MUON_LOG_AT_IF(level, condition) MUON_LOGGER_STREAM(level)

#define LOG_EVERY_N(level, n)                                    \
  MUON_LOG_AT_IF(level, MUON_RATE_LIMITER(EveryN).admit(n))      \
  MUON_LOGGER_STREAM(level) << ::muon::detail::SuppressedNote()

#define LOG_FIRST_N(level, n) \
  MUON_LOG_AT_IF(level, MUON_RATE_LIMITER(FirstN).admit(n)) MUON_LOGGER_STREAM(level)

#define LOG_EVERY_T(level, seconds)                              \
  MUON_LOG_AT_IF(level, MUON_RATE_LIMITER(EveryT).admit(seconds)) \
  MUON_LOGGER_STREAM(level) << ::muon::detail::SuppressedNote()
