// What the net tests need to know about the engines: whether this kernel
// and process can run io_uring, and scoped environment changes.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

#ifdef MUON_HAVE_URING
#include <liburing.h>
#endif

namespace muon {
namespace net {
namespace test {

// "" when an io_uring instance can be set up here, else why not. Tests that
// need io_uring GTEST_SKIP with this reason.
inline std::string uringUnavailableReason() {
#ifdef MUON_HAVE_URING
  struct io_uring ring;
  int rc = io_uring_queue_init(8, &ring, 0);
  if (rc < 0) return std::string("io_uring_setup: ") + std::strerror(-rc);
  io_uring_queue_exit(&ring);
  return "";
#else
  return "muon was built without liburing";
#endif
}

// Sets (or, with nullptr, unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    hadOld_ = old != nullptr;
    if (hadOld_) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (hadOld_) {
      ::setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::string old_;
  bool hadOld_;
};

}  // namespace test
}  // namespace net
}  // namespace muon
