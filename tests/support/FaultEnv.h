// An Env (muon/base/Env.h) whose open, write and unlink fail on demand with
// the errno a real device or directory would give: EROFS, ENOSPC (no blocks
// or no inodes left), EACCES, EPERM. Every other call is the real one. For tests
// only; any thread may set or read the fields.
#pragma once

#include <atomic>
#include <cerrno>

#include "muon/base/Env.h"

namespace muon {
namespace test {

class FaultEnv : public Env {
 public:
  // While nonzero, every such call fails with this errno; 0: the real call.
  std::atomic<int> openErrno{0};
  std::atomic<int> writeErrno{0};
  std::atomic<int> unlinkErrno{0};

  int open(const char* path, int flags, mode_t mode) override {
    if (int e = openErrno.load()) return fail(e);
    return Env::open(path, flags, mode);
  }
  ssize_t write(int fd, const char* data, size_t len) override {
    if (int e = writeErrno.load()) return fail(e);
    return Env::write(fd, data, len);
  }
  int unlink(const char* path) override {
    if (int e = unlinkErrno.load()) return fail(e);
    return Env::unlink(path);
  }

 private:
  static int fail(int e) {
    errno = e;
    return -1;
  }
};

}  // namespace test
}  // namespace muon
