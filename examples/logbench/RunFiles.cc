#include "RunFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "muon/base/filestages/LogReader.h"

namespace fs = std::filesystem;

namespace logbench {

namespace {

// Counts the complete lines holding the marker in text fed piece by piece;
// a marker or a line split between two pieces is still found.
class LineCounter {
 public:
  explicit LineCounter(std::string_view marker) : marker_(marker) {}

  void feed(std::string_view piece) {
    size_t start = 0;
    while (start < piece.size()) {
      size_t nl = piece.find('\n', start);
      std::string_view part = piece.substr(start, nl == std::string_view::npos ? nl : nl - start);
      if (!lineHasMarker_) {
        // Only the tail that could start a marker is carried between pieces.
        carry_.append(part.data(), part.size());
        lineHasMarker_ = carry_.find(marker_) != std::string::npos;
        if (carry_.size() > marker_.size()) carry_.erase(0, carry_.size() - (marker_.size() - 1));
      }
      if (nl == std::string_view::npos) return;
      if (lineHasMarker_) ++lines_;
      lineHasMarker_ = false;
      carry_.clear();
      start = nl + 1;
    }
  }
  uint64_t lines() const { return lines_; }

 private:
  const std::string_view marker_;
  std::string carry_;
  bool lineHasMarker_ = false;
  uint64_t lines_ = 0;
};

// Counts the message lines in one file. Plain files are read in chunks and
// never mapped, so reading a 3 GB log back does not show up in the peak RSS
// the run reports; compressed or encrypted ones (.zst, .enc) are decoded by
// readLogFile, which gives pages back as it goes. *bytes gets the file's
// size on disk. False, with a message, if the file cannot be read.
bool countMessageLines(const std::string& path, std::string_view marker, const muon::AesKey* key,
                       uint64_t* bytes, uint64_t* lines) {
  LineCounter counter(marker);
  auto endsWith = [&path](const char* tail) {
    size_t n = std::strlen(tail);
    return path.size() >= n && path.compare(path.size() - n, n, tail) == 0;
  };
  if (endsWith(".zst") || endsWith(".enc")) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) *bytes += static_cast<uint64_t>(st.st_size);
    muon::LogReadResult r =
        muon::readLogFile(path, key, [&counter](std::string_view t) { counter.feed(t); });
    *lines += counter.lines();
    if (!r.ok) {
      std::fprintf(stderr, "%s: %s: %s at offset %llu\n", program_invocation_short_name, path.c_str(), r.error.c_str(),
                   static_cast<unsigned long long>(r.offset));
    }
    return r.ok;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "%s: cannot open %s: %s\n", program_invocation_short_name, path.c_str(), std::strerror(errno));
    return false;
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buf(1 << 20);
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::fprintf(stderr, "%s: cannot read %s: %s\n", program_invocation_short_name, path.c_str(), std::strerror(errno));
      ok = false;
      break;
    }
    if (n == 0) break;
    *bytes += static_cast<uint64_t>(n);
    counter.feed(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  ::close(fd);
  *lines += counter.lines();
  return ok;
}

}  // namespace

bool scanLogFiles(const std::string& dir, std::string_view marker, const muon::AesKey* key,
                  uint64_t* bytes, uint64_t* lines) {
  *bytes = 0;
  *lines = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_symlink(ec) || !entry.is_regular_file(ec)) continue;
    if (!countMessageLines(entry.path().string(), marker, key, bytes, lines)) return false;
  }
  if (ec) {
    std::fprintf(stderr, "%s: cannot list %s: %s\n", program_invocation_short_name, dir.c_str(), ec.message().c_str());
    return false;
  }
  return true;
}

std::string makeTempDir(const std::string& templ) {
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    std::fprintf(stderr, "%s: cannot create %s: %s\n", program_invocation_short_name, templ.c_str(), std::strerror(errno));
    std::exit(1);
  }
  return std::string(buf.data());
}

void warmUp(const std::string& dir, uint64_t bytes) {
  std::string path = dir + "/warm-up";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  std::vector<char> chunk(1 << 20, 'w');
  for (uint64_t done = 0; done < bytes;) {
    ssize_t n = ::write(fd, chunk.data(), std::min<uint64_t>(chunk.size(), bytes - done));
    if (n <= 0) break;
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  ::unlink(path.c_str());
}

}  // namespace logbench
