// AppendFile: a file opened for appending, written through a 64 KiB buffer
// (or straight through, for a writer whose chunks are large already).
//
// Errors are values, never asserts: each write-side call returns what it
// wrote and the errno of a failure (WriteResult); a failed write is retried
// on EINTR and on short writes first. writtenBytes() counts only bytes the
// kernel took. A write that fails part-way (a full disk) can leave the file
// ending inside a line; the next write first ends that line with '\n'
// (counted as written), so a later line is never glued to the front half of
// a cut one. With stages (FileStage.h) each chunk is one record, and a
// record a failed write cut short is cut back out instead. Callers append
// whole lines. The file is opened through an Env (Env.h) and written through
// a WriteFunction (by default the Env's write): the seams through which tests
// inject EROFS, ENOSPC, EIO, short writes and slowness without a real device.
// Not thread-safe: one owner (LogFile) calls it, under its own lock.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "muon/base/internal/FileIo.h"

namespace muon {

class Env;
class FileStage;

// Same contract as write(2): bytes written, or -1 with errno set.
using WriteFunction = std::function<ssize_t(int fd, const char* data, size_t len)>;

// Which file the next byte appended lands in, and where: what a crash-safe
// AsyncLogging records before it writes a buffer, so that recovery can tell
// whether the write happened (see SpoolFormat.h).
struct FilePosition {
  std::string path;
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;  // the file's size: where the next append starts
};

// What one write-side call did.
struct WriteResult {
  uint64_t written = 0;  // bytes that reached the file
  int error = 0;         // errno of the first failure; 0 if every byte was written
  WriteResult& operator+=(const WriteResult& other) {
    written += other.written;
    if (error == 0) error = other.error;
    return *this;
  }
};

class AppendFile {
 public:
  static constexpr size_t kBufferSize = 64 * 1024;

  // Creates `path` (never opening an existing file: O_EXCL). Returns nullptr
  // and sets *savedErrno when it cannot. buffered = false: every append is
  // written at once, as one chunk (AsyncLogging's 4 MiB buffers gain
  // nothing from a copy into 64 KiB).
  // The file gets `mode` (never more: the umask may only take bits away),
  // and a symbolic link at `path` is never followed (O_EXCL | O_NOFOLLOW:
  // EEXIST). `env` opens it and, without a WriteFunction, writes it
  // (nullptr: Env::defaultEnv()); it must outlive the AppendFile.
  static std::unique_ptr<AppendFile> create(const std::string& path, WriteFunction write,
                                            int* savedErrno, bool buffered = true,
                                            mode_t mode = 0640, Env* env = nullptr);
  ~AppendFile();  // flushes, then closes
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Buffers [data, data+len); writes the buffer out when it fills.
  WriteResult append(const char* data, size_t len);
  // Writes out what is buffered.
  WriteResult flush();

  // Where the next byte appended lands: this file (its identity, taken when
  // it was created) at the size its writes made it, what is buffered counted
  // as written. Known from the writes, without a system call. False if the
  // identity could not be had.
  bool nextPosition(FilePosition* pos) const;

  // Every chunk written from now on goes through these stages first and is
  // written as one record; a record a failed write cut short is cut back out
  // of the file (ftruncate), so the file holds whole records only. The
  // vector must outlive this AppendFile.
  void setStages(const std::vector<std::shared_ptr<FileStage>>* stages) { stages_ = stages; }

  // Replaces the write seam (tests set it before writing); an empty one
  // restores the Env's write.
  void setWriteFunction(WriteFunction write);

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // Bytes the kernel accepted: the file's size as far as we know.
  uint64_t writtenBytes() const { return writtenBytes_; }
  // writtenBytes() plus what waits in the buffer: the size the file is heading for.
  uint64_t sizeIncludingBuffered() const { return writtenBytes_ + buffered_; }
  // Bytes given to append() that will never reach the file.
  uint64_t lostBytes() const { return lostBytes_; }
  // write(2) calls that failed (after EINTR retries).
  uint64_t writeErrors() const { return writeErrors_; }

 private:
  AppendFile(std::string path, int fd, Env* env, WriteFunction write, bool buffered);
  // Writes all of [data, data+len) as one chunk, or fails; counts what happened.
  WriteResult writeFully(const char* data, size_t len);
  // Writes until done or a write fails (counted).
  WriteResult writeSome(const char* data, size_t len);
  // writeFully for a file with stages.
  WriteResult writeRecord(const char* data, size_t len);

  const std::string path_;
  const int fd_;
  Env* const env_;
  bool identified_ = false;  // device_ and inode_ are known
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
  WriteFunction write_;
  std::unique_ptr<char[]> buffer_;
  size_t buffered_ = 0;
  uint64_t writtenBytes_ = 0;
  uint64_t lostBytes_ = 0;
  uint64_t writeErrors_ = 0;
  bool cutLine_ = false;  // a failed write left the file ending inside a line
  const std::vector<std::shared_ptr<FileStage>>* stages_ = nullptr;
  std::string stageOutput_[2];  // reused between chunks: no allocation per record
};

}  // namespace muon
