// The floor under the loggers: no logger at all, only what any of them must
// do to get a message into a file. The caller copies the message and a
// newline into one 64 KiB buffer under a lock, and write(2)s the buffer
// when the next message would not fit: a synchronous logger with no
// timestamp, no prefix and no formatting. Whatever a logger costs above
// this row is its own; what this row costs is the kernel's (and the copy's).
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "Backend.h"

namespace logbench {

namespace {

constexpr size_t kBufferBytes = 64 * 1024;

class FloorBackend : public Backend {
 public:
  const char* name() const override { return "floor"; }

  void open(const std::string& dir) override {
    const std::string path = dir + "/floor.log";
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      std::fprintf(stderr, "floor: cannot create %s: %s\n", path.c_str(), std::strerror(errno));
      std::exit(1);
    }
    used_ = 0;
  }

  void produce(uint64_t begin, uint64_t end, std::string_view extra, uint64_t* samples) override {
    produceLoop(
        [this, extra](uint64_t i) {
          char line[4200];
          char* p = line;
          p = copy(p, kHello);
          p = copy(p, kAlphabet);
          p = copy(p, extra.substr(0, 4000));
          p = std::to_chars(p, line + sizeof line, i).ptr;
          logPayload(std::string_view(line, static_cast<size_t>(p - line)));
        },
        begin, end, samples);
  }

  void logPayload(std::string_view payload) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (used_ + payload.size() + 1 > kBufferBytes) writeBufferLocked();
    // A message longer than the buffer goes out on its own.
    if (payload.size() + 1 > kBufferBytes) return writeAll(payload.data(), payload.size(), "\n");
    std::memcpy(buffer_ + used_, payload.data(), payload.size());
    used_ += payload.size();
    buffer_[used_++] = '\n';
  }

  void finish() override {
    std::lock_guard<std::mutex> lock(mutex_);
    writeBufferLocked();
    ::close(fd_);
    fd_ = -1;
  }

 private:
  static char* copy(char* p, std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    return p + s.size();
  }

  void writeBufferLocked() {
    writeAll(buffer_, used_, "");
    used_ = 0;
  }

  void writeAll(const char* data, size_t len, const char* tail) {
    for (const char* end = data + len; data < end;) {
      ssize_t n = ::write(fd_, data, static_cast<size_t>(end - data));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        std::fprintf(stderr, "floor: write failed: %s\n", std::strerror(errno));
        std::exit(1);
      }
      data += n;
    }
    if (*tail != '\0') writeAll(tail, std::strlen(tail), "");
  }

  std::mutex mutex_;
  int fd_ = -1;
  size_t used_ = 0;
  char buffer_[kBufferBytes];
};

}  // namespace

std::unique_ptr<Backend> makeFloorBackend() { return std::make_unique<FloorBackend>(); }

}  // namespace logbench
