// CurrentThread: the calling thread's kernel thread id, cached per thread.
// Every function here is about the calling thread, so any thread may call them.
#pragma once

#include <string_view>

namespace muon {
namespace CurrentThread {

namespace detail {
// Per-thread cache; 0 means "not looked up yet". Reset to 0 in a forked child
// (through pthread_atfork), because the child's thread has a new id.
struct ThreadIdCache {
  int tid;
  int tidStringLength;
  char tidString[32];  // "%5d " as the log line wants it
};
extern thread_local ThreadIdCache t_cache;
void cacheTid();
}  // namespace detail

// gettid(), with one system call per thread (and per fork).
inline int tid() {
  if (__builtin_expect(detail::t_cache.tid == 0, 0)) detail::cacheTid();
  return detail::t_cache.tid;
}

// tid() as the log line prints it: right-aligned in 5 columns, then a space.
inline std::string_view tidString() {
  tid();
  return std::string_view(detail::t_cache.tidString,
                          static_cast<size_t>(detail::t_cache.tidStringLength));
}

bool isMainThread();

}  // namespace CurrentThread
}  // namespace muon
