#include "muon/base/FileUtil.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace muon {

namespace {
ssize_t systemWrite(int fd, const char* data, size_t len) { return ::write(fd, data, len); }
}  // namespace

std::string directoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string fileNameOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::unique_ptr<AppendFile> AppendFile::create(const std::string& path, WriteFunction write,
                                               int* savedErrno) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *savedErrno = errno;
    return nullptr;
  }
  if (!write) write = &systemWrite;
  return std::unique_ptr<AppendFile>(new AppendFile(path, fd, std::move(write)));
}

AppendFile::AppendFile(std::string path, int fd, WriteFunction write)
    : path_(std::move(path)), fd_(fd), write_(std::move(write)), buffer_(new char[kBufferSize]) {}

AppendFile::~AppendFile() {
  flush();
  ::close(fd_);
}

void AppendFile::setWriteFunction(WriteFunction write) {
  write_ = write ? std::move(write) : WriteFunction(&systemWrite);
}

void AppendFile::append(const char* data, size_t len) {
  if (buffered_ + len > kBufferSize) {
    flush();
    // A chunk at least as large as the buffer gains nothing from a copy.
    if (len >= kBufferSize) {
      writeFully(data, len);
      return;
    }
  }
  std::memcpy(buffer_.get() + buffered_, data, len);
  buffered_ += len;
}

bool AppendFile::flush() {
  if (buffered_ == 0) return true;
  bool ok = writeFully(buffer_.get(), buffered_);
  buffered_ = 0;
  return ok;
}

bool AppendFile::position(FilePosition* pos) {
  if (!flush()) return false;
  struct stat st;
  if (::fstat(fd_, &st) != 0) return false;
  pos->path = path_;
  pos->device = static_cast<uint64_t>(st.st_dev);
  pos->inode = static_cast<uint64_t>(st.st_ino);
  pos->size = static_cast<uint64_t>(st.st_size);
  return true;
}

bool AppendFile::writeFully(const char* data, size_t len) {
  // An earlier failure cut a line: end it first, or the next line would be
  // glued to its front half and both read as one garbled line.
  if (cutLine_) {
    if (writeSome("\n", 1) == 0) {
      lostBytes_ += len;
      return false;
    }
    cutLine_ = false;
  }
  size_t done = writeSome(data, len);
  if (done == len) return true;
  lostBytes_ += len - done;
  // Callers append whole lines, so a chunk that stops short of its end
  // stops inside a line unless it stopped right after a '\n'.
  if (done > 0 && data[done - 1] != '\n') cutLine_ = true;
  return false;
}

size_t AppendFile::writeSome(const char* data, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = write_(fd_, data + done, len - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      writtenBytes_ += static_cast<uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // n == 0 (nothing taken, no error) is treated like an error, or we could spin.
      lastError_ = n < 0 ? errno : EIO;
      ++writeErrors_;
      break;
    }
  }
  return done;
}

}  // namespace muon
