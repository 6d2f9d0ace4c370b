// Env: the file-system calls LogFile and AppendFile make, behind one small
// interface (LevelDB's Env), so that a test can make any of them fail with
// the errno a real device would give (EROFS, ENOSPC, EACCES, EPERM) without
// root, a full disk or a read-only mount.
//
// Each method has its system call's contract: the result, or -1 with errno
// set. The defaults are the system calls themselves; a test derives from Env
// and overrides what it wants to fail, calling Env's version for the rest.
// An Env is shared by every LogFile given it (LogFile::Options::env) and must
// outlive them; its methods may be called from any thread that writes logs.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

namespace muon {

class Env {
 public:
  Env() = default;
  virtual ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // The real system calls; lives as long as the process.
  static Env* defaultEnv();

  virtual int open(const char* path, int flags, mode_t mode);
  virtual ssize_t write(int fd, const char* data, size_t len);
  virtual int stat(const char* path, struct stat* st);
  virtual int lstat(const char* path, struct stat* st);
  virtual int rename(const char* from, const char* to);
  virtual int unlink(const char* path);
  virtual int symlink(const char* target, const char* linkPath);
};

}  // namespace muon
