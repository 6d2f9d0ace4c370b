#include "muon/base/FileUtil.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "muon/base/Env.h"
#include "muon/base/FileStage.h"

namespace muon {

namespace {
WriteFunction envWrite(Env* env) {
  return [env](int fd, const char* data, size_t len) { return env->write(fd, data, len); };
}
}  // namespace

std::unique_ptr<AppendFile> AppendFile::create(const std::string& path, WriteFunction write,
                                               int* savedErrno, bool buffered, mode_t mode,
                                               Env* env) {
  if (env == nullptr) env = Env::defaultEnv();
  int fd = env->open(path.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, mode);
  if (fd < 0) {
    *savedErrno = errno;
    return nullptr;
  }
  if (!write) write = envWrite(env);
  return std::unique_ptr<AppendFile>(new AppendFile(path, fd, env, std::move(write), buffered));
}

AppendFile::AppendFile(std::string path, int fd, Env* env, WriteFunction write, bool buffered)
    : path_(std::move(path)),
      fd_(fd),
      env_(env),
      write_(std::move(write)),
      buffer_(buffered ? new char[kBufferSize] : nullptr) {
  struct stat st;
  if (::fstat(fd_, &st) == 0) {
    identified_ = true;
    device_ = static_cast<uint64_t>(st.st_dev);
    inode_ = static_cast<uint64_t>(st.st_ino);
  }
}

AppendFile::~AppendFile() {
  flush();
  ::close(fd_);
}

void AppendFile::setWriteFunction(WriteFunction write) {
  write_ = write ? std::move(write) : envWrite(env_);
}

WriteResult AppendFile::append(const char* data, size_t len) {
  // A chunk at least as large as the buffer gains nothing from a copy.
  if (!buffer_ || len >= kBufferSize) {
    WriteResult r = flush();
    r += writeFully(data, len);
    return r;
  }
  WriteResult r;
  if (buffered_ + len > kBufferSize) r = flush();
  std::memcpy(buffer_.get() + buffered_, data, len);
  buffered_ += len;
  return r;
}

WriteResult AppendFile::flush() {
  if (buffered_ == 0) return WriteResult();
  WriteResult r = writeFully(buffer_.get(), buffered_);
  buffered_ = 0;
  return r;
}

bool AppendFile::nextPosition(FilePosition* pos) const {
  if (!identified_) return false;
  pos->path = path_;
  pos->device = device_;
  pos->inode = inode_;
  pos->size = sizeIncludingBuffered();
  return true;
}

WriteResult AppendFile::writeRecord(const char* data, size_t len) {
  std::string_view in(data, len);
  size_t k = 0;
  for (const auto& stage : *stages_) {
    std::string& out = stageOutput_[k++ % 2];
    out.clear();
    std::string error;
    if (!stage->transform(in, &out, &error)) {
      std::fprintf(stderr, "muon::AppendFile: %s stage failed for '%s': %s\n", stage->suffix(),
                   path_.c_str(), error.c_str());
      lostBytes_ += len;
      ++writeErrors_;
      WriteResult r;
      r.error = EIO;
      return r;
    }
    in = out;
  }
  const uint64_t before = writtenBytes_;
  WriteResult r = writeSome(in.data(), in.size());
  if (r.error == 0) return r;
  lostBytes_ += len;
  // Half a record is no record: cut it back out, so that readers see whole
  // records and the next one starts where they expect.
  if (r.written > 0 && ::ftruncate(fd_, static_cast<off_t>(before)) == 0) {
    writtenBytes_ = before;
    r.written = 0;
  }
  return r;
}

WriteResult AppendFile::writeFully(const char* data, size_t len) {
  if (stages_ && !stages_->empty()) return writeRecord(data, len);
  WriteResult r;
  // An earlier failure cut a line: end it first, or the next line would be
  // glued to its front half and both read as one garbled line.
  if (cutLine_) {
    r = writeSome("\n", 1);
    if (r.error != 0) {
      lostBytes_ += len;
      return r;
    }
    cutLine_ = false;
  }
  WriteResult body = writeSome(data, len);
  r += body;
  if (body.error == 0) return r;
  lostBytes_ += len - body.written;
  // Callers append whole lines, so a chunk that stops short of its end
  // stops inside a line unless it stopped right after a '\n'.
  if (body.written > 0 && data[body.written - 1] != '\n') cutLine_ = true;
  return r;
}

WriteResult AppendFile::writeSome(const char* data, size_t len) {
  WriteResult r;
  while (r.written < len) {
    ssize_t n = write_(fd_, data + r.written, len - r.written);
    if (n > 0) {
      r.written += static_cast<uint64_t>(n);
      writtenBytes_ += static_cast<uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // n == 0 (nothing taken, no error) is treated like an error, or we could spin.
      r.error = n < 0 ? errno : EIO;
      ++writeErrors_;
      break;
    }
  }
  return r;
}

}  // namespace muon
