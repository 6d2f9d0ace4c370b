#include "muon/base/CurrentThread.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

namespace muon {
namespace CurrentThread {

namespace {

// Per-thread cache; tid == 0 means "not looked up yet".
struct ThreadIdCache {
  int tid;
  int tidStringLength;
  char tidString[32];  // "%5d " as the log line wants it
};
thread_local ThreadIdCache t_cache = {0, 0, {}};

// A forked child's only thread has a new id.
void resetInChild() { t_cache.tid = 0; }

// Registered once per process, at static initialization.
struct AtForkRegistration {
  AtForkRegistration() { ::pthread_atfork(nullptr, nullptr, &resetInChild); }
};
AtForkRegistration g_atForkRegistration;

void cacheTid() {
  t_cache.tid = static_cast<int>(::syscall(SYS_gettid));
  t_cache.tidStringLength =
      std::snprintf(t_cache.tidString, sizeof t_cache.tidString, "%5d ", t_cache.tid);
}

}  // namespace

int tid() {
  if (__builtin_expect(t_cache.tid == 0, 0)) cacheTid();
  return t_cache.tid;
}

std::string_view tidString() {
  tid();
  return std::string_view(t_cache.tidString, static_cast<size_t>(t_cache.tidStringLength));
}

bool isMainThread() { return tid() == ::getpid(); }

}  // namespace CurrentThread
}  // namespace muon
