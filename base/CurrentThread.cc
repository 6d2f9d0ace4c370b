#include "muon/base/CurrentThread.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

namespace muon {
namespace CurrentThread {
namespace detail {

thread_local ThreadIdCache t_cache = {0, 0, {}};

namespace {
void resetInChild() { t_cache.tid = 0; }

// Registered once per process, before any thread caches its id.
struct AtForkRegistration {
  AtForkRegistration() { ::pthread_atfork(nullptr, nullptr, &resetInChild); }
};
AtForkRegistration g_atForkRegistration;
}  // namespace

void cacheTid() {
  t_cache.tid = static_cast<int>(::syscall(SYS_gettid));
  t_cache.tidStringLength =
      std::snprintf(t_cache.tidString, sizeof t_cache.tidString, "%5d ", t_cache.tid);
}

}  // namespace detail

bool isMainThread() { return tid() == ::getpid(); }

}  // namespace CurrentThread
}  // namespace muon
