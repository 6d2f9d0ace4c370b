// The burst harness: how log_latency and the peers' latency programs
// (peers/peer_latency.cc) time one log call, so that their figures compare.
// Nothing here uses muon or a logger; only C++, POSIX and the x86-64 counter.
//
// Each measuring thread runs bursts of kBurstCalls calls and sleeps ~10 us
// between bursts; each call is timed alone between two fenced counter reads
// (lfence; rdtsc; lfence), and every sample of the measured bursts is kept.
// The samples of all threads are merged and their percentiles taken by
// nearest rank. Internal to the benchmarks; any thread may call it.
#pragma once

#include <sys/prctl.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace burst {

constexpr int kBurstCalls = 20;
constexpr long kSleepNanos = 10 * 1000;
// The kernel's default timer slack (50 us) lets a 10 us sleep last several
// times that; 1 ns asks for the sleep as written.
constexpr unsigned long kTimerSlackNanos = 1;
constexpr int kMaxThreads = 2;

// ---- The counter -----------------------------------------------------------

// One fenced read: the lfence before keeps earlier work from finishing after
// it, the one after keeps later work from starting before it. The empty asm
// keeps the compiler from moving memory accesses across.
inline uint64_t readCounter() {
#if defined(__x86_64__)
  asm volatile("" ::: "memory");
  _mm_lfence();
  const uint64_t c = __rdtsc();
  _mm_lfence();
  asm volatile("" ::: "memory");
  return c;
#else
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

inline uint64_t monotonicNanos() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

inline void sleepNanos(long nanos) {
  struct timespec ts = {0, nanos};
  while (::clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

// Nanoseconds per count of readCounter(), measured against CLOCK_MONOTONIC
// over 200 ms (1.0 where the counter is CLOCK_MONOTONIC itself).
inline double calibrateCounter() {
#if defined(__x86_64__)
  const uint64_t c0 = readCounter(), n0 = monotonicNanos();
  sleepNanos(200 * 1000 * 1000);
  const uint64_t c1 = readCounter(), n1 = monotonicNanos();
  return static_cast<double>(n1 - n0) / static_cast<double>(c1 - c0);
#else
  return 1.0;
#endif
}

// ---- The measurement -------------------------------------------------------

struct Plan {
  long bursts = 100000;     // measured bursts per thread
  long warmup = 10000;      // bursts before them per thread, not kept
  bool countOnly = false;   // time nothing; each measured call through countedCall
};

// One thread's samples, allocated and touched before any case runs, so that
// storing a sample never faults a page in.
struct ThreadSamples {
  std::vector<uint64_t> counts;  // kBurstCalls per measured burst
  uint64_t measuredCounts = 0;   // counter ticks from the first measured burst to the end
};

inline std::vector<ThreadSamples> makeSamples(const Plan& plan) {
  std::vector<ThreadSamples> samples(kMaxThreads);
  for (ThreadSamples& s : samples) s.counts.assign(static_cast<size_t>(plan.bursts) * kBurstCalls, 0);
  return samples;
}

// One call, out of line where callgrind can count it (--count-only):
// valgrind --tool=callgrind --toggle-collect='*countedCall*'.
template <typename Call>
__attribute__((noipa)) void countedCall(Call& call, uint64_t seq) {
  call(seq);
}

// Runs warm-up and measured bursts of `call(seq)` on this thread. seq
// counts the thread's calls from `firstSeq`, so lines differ across threads.
template <typename Call>
void runBursts(const Plan& plan, uint64_t firstSeq, Call& call, ThreadSamples* out) {
  ::prctl(PR_SET_TIMERSLACK, kTimerSlackNanos, 0, 0, 0);
  uint64_t warmupSamples[kBurstCalls];
  uint64_t seq = firstSeq;
  uint64_t measuredStart = 0;
  const long total = plan.warmup + plan.bursts;
  for (long b = 0; b < total; ++b) {
    const bool measured = b >= plan.warmup;
    if (b == plan.warmup) measuredStart = readCounter();
    uint64_t* samples =
        measured ? out->counts.data() + static_cast<size_t>(b - plan.warmup) * kBurstCalls : warmupSamples;
    if (measured && plan.countOnly) {
      for (int k = 0; k < kBurstCalls; ++k) countedCall(call, seq++);
      sleepNanos(kSleepNanos);
      continue;
    }
    for (int k = 0; k < kBurstCalls; ++k) {
      const uint64_t t0 = readCounter();
      call(seq);
      const uint64_t t1 = readCounter();
      samples[k] = t1 - t0;
      ++seq;
    }
    sleepNanos(kSleepNanos);
  }
  out->measuredCounts = readCounter() - measuredStart;
}

// Calls each thread makes, warm-up and measured: thread t's seq starts at
// t times this.
inline uint64_t callsPerThread(const Plan& plan) {
  return static_cast<uint64_t>(plan.warmup + plan.bursts) * kBurstCalls;
}

// Starts `threads` threads that begin their bursts together, and joins them.
template <typename Call>
void measure(const Plan& plan, int threads, Call call, std::vector<ThreadSamples>* samples) {
  std::atomic<int> ready{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      Call own = call;
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      runBursts(plan, callsPerThread(plan) * static_cast<uint64_t>(t), own, &(*samples)[static_cast<size_t>(t)]);
    });
  }
  for (std::thread& w : workers) w.join();
}

// ---- The two messages ------------------------------------------------------

enum class Message { kShort, kIntIntDouble };

inline const char* messageName(Message m) { return m == Message::kShort ? "short" : "int-int-double"; }

// False if `name` is neither message's name.
inline bool parseMessage(const std::string& name, Message* m) {
  if (name == "short") {
    *m = Message::kShort;
  } else if (name == "int-int-double") {
    *m = Message::kIntIntDouble;
  } else {
    return false;
  }
  return true;
}

// The short message's text, and what marks one of a case's lines when its
// files are read back. Each logger logs it as a literal at the call site, as
// its users would write it: the peers as their format string, muon as a
// `<<` of the array (kShortLiteral), which a statement stores as the
// literal's words; a `const char*` operand would be a string of run-time
// length, copied byte for byte.
constexpr char kShortLiteral[] = "Hello 0123456789 abcdefghijklmnopqrstuvwxyz";
constexpr const char* kShortText = kShortLiteral;
inline const char* messageMarker(Message m) { return m == Message::kShort ? "Hello 0123456789" : "Logging int: "; }

// The values of the int-int-double message. They change with every call, so
// that no formatting is the same twice in a row.
struct IntIntDouble {
  int i, j;
  double d;
  explicit IntIntDouble(uint64_t seq)
      : i(static_cast<int>(seq)), j(static_cast<int>(seq * 3 + 1)), d(static_cast<double>(i) * 1.5 + 0.25) {}
};

// ---- Percentiles -----------------------------------------------------------

// The columns: p50 p90 p99 p99.9 p99.99 max.
constexpr int kColumns = 6;
constexpr const char* kColumnHeader = "p50 | p90 | p99 | p99.9 | p99.99 | max";

// Merges the first `threads` threads' samples into `all` (its old contents
// dropped) and writes their percentiles in ns to ns[0..kColumns). Returns the
// mean time in us from one measured burst's start to the next's.
inline double percentiles(const std::vector<ThreadSamples>& samples, int threads, const Plan& plan,
                          double nanosPerCount, std::vector<uint64_t>* all, uint64_t ns[kColumns]) {
  // Nearest rank, in parts per million: 50%, 90%, 99%, 99.9%, 99.99%.
  constexpr uint64_t kPercentilePpm[] = {500000, 900000, 990000, 999000, 999900};
  all->clear();
  uint64_t measuredCounts = 0;
  for (int t = 0; t < threads; ++t) {
    const std::vector<uint64_t>& c = samples[static_cast<size_t>(t)].counts;
    all->insert(all->end(), c.begin(), c.end());
    measuredCounts += samples[static_cast<size_t>(t)].measuredCounts;
  }
  const uint64_t n = all->size();
  auto begin = all->begin();
  size_t from = 0;
  for (size_t p = 0; p < kColumns - 1; ++p) {
    uint64_t rank = (kPercentilePpm[p] * n + 999999) / 1000000;
    if (rank < 1) rank = 1;
    const size_t at = static_cast<size_t>(rank - 1);
    std::nth_element(begin + static_cast<long>(from), begin + static_cast<long>(at), all->end());
    ns[p] = static_cast<uint64_t>(std::llround(static_cast<double>((*all)[at]) * nanosPerCount));
    from = at;
  }
  ns[kColumns - 1] = static_cast<uint64_t>(std::llround(
      static_cast<double>(*std::max_element(begin + static_cast<long>(from), all->end())) * nanosPerCount));
  return static_cast<double>(measuredCounts) * nanosPerCount / 1000.0 / threads / static_cast<double>(plan.bursts);
}

}  // namespace burst
