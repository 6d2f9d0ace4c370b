#include "muon/base/Env.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace muon {

Env::~Env() = default;

Env* Env::defaultEnv() {
  // Never destroyed: log files may still be written from other threads and
  // from exit handlers while static objects go away.
  static Env* env = new Env;
  return env;
}

int Env::open(const char* path, int flags, mode_t mode) { return ::open(path, flags, mode); }

ssize_t Env::write(int fd, const char* data, size_t len) { return ::write(fd, data, len); }

int Env::stat(const char* path, struct stat* st) { return ::stat(path, st); }

int Env::lstat(const char* path, struct stat* st) { return ::lstat(path, st); }

int Env::rename(const char* from, const char* to) { return std::rename(from, to); }

int Env::unlink(const char* path) { return ::unlink(path); }

int Env::symlink(const char* target, const char* linkPath) { return ::symlink(target, linkPath); }

}  // namespace muon
