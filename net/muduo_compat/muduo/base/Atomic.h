// muduo/base/Atomic.h for muduo programs built on muon: AtomicInt32 and
// AtomicInt64 with muduo's member names, over std::atomic (sequentially
// consistent, as muduo's __sync builtins were). New code uses std::atomic.
#pragma once

#include <atomic>
#include <cstdint>

#include "muduo/base/noncopyable.h"

namespace muduo {
namespace detail {

template <typename T>
class AtomicIntegerT : noncopyable {
 public:
  AtomicIntegerT() : value_(0) {}

  T get() { return value_.load(); }
  T getAndAdd(T x) { return value_.fetch_add(x); }
  T addAndGet(T x) { return static_cast<T>(getAndAdd(x) + x); }
  T incrementAndGet() { return addAndGet(1); }
  T decrementAndGet() { return addAndGet(-1); }
  void add(T x) { getAndAdd(x); }
  void increment() { incrementAndGet(); }
  void decrement() { decrementAndGet(); }
  T getAndSet(T newValue) { return value_.exchange(newValue); }

 private:
  std::atomic<T> value_;
};

}  // namespace detail

using AtomicInt32 = detail::AtomicIntegerT<int32_t>;
using AtomicInt64 = detail::AtomicIntegerT<int64_t>;

}  // namespace muduo
