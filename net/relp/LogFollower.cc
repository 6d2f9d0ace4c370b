#include "muon/net/relp/LogFollower.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "muon/base/internal/FileIo.h"
#include "muon/base/LogFile.h"
#include "muon/base/filestages/LogReader.h"

namespace muon {
namespace net {
namespace relp {

namespace {

bool endsWith(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

int64_t nowMs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

LogFollower::LogFollower(const std::string& basename, const AesKey* key, int finishGraceMs)
    : basename_(basename),
      dir_(directoryOf(basename)),
      prefix_(fileNameOf(basename)),
      finishGraceMs_(finishGraceMs) {
  if (key) key_ = *key;
}

LogFollower::~LogFollower() {
  for (File& f : files_) ::close(f.fd);
  if (key_) key_->fill(0);
}

bool LogFollower::parse(const std::string& name, File* f) const {
  if (!LogFile::parseLogFileName(prefix_, name, &f->time, &f->sequence)) return false;
  f->name = name;
  f->decoded = endsWith(name, ".zst") || endsWith(name, ".enc");
  return true;
}

void LogFollower::seek(const LogPosition& from) {
  while (!files_.empty()) closeFront();
  last_.reset();
  seekTo_ = from;
}

void LogFollower::rescan() {
  std::vector<File> found;
  if (DIR* d = ::opendir(dir_.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      File f;
      if (parse(e->d_name, &f)) found.push_back(std::move(f));
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end(),
            [](const File& a, const File& b) { return keyOf(a) < keyOf(b); });
  std::optional<Key> from = last_;  // only newer than this
  bool fromIncluded = false;        // a seek's file itself is wanted
  uint64_t seekOffset = 0;
  if (seekTo_) {
    File target;
    if (!seekTo_->file.empty() && parse(seekTo_->file, &target)) {
      from = keyOf(target);
      fromIncluded = true;
      seekOffset = seekTo_->offset;
      const bool present = std::any_of(found.begin(), found.end(),
                                       [&](const File& f) { return f.name == target.name; });
      if (!present) {
        skips_.push_back(Skip{target.name, 0, true, "it was deleted before it was read to its end"});
      }
    }
    seekTo_.reset();
  }
  for (File& f : found) {
    const Key key = keyOf(f);
    if (from && (key < *from || (key == *from && !fromIncluded))) continue;
    if (files_.size() >= kMaxOpenFiles) break;
    const std::string path = dir_ + "/" + f.name;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    last_ = key;
    if (f.fd < 0) {
      skips_.push_back(Skip{f.name, 0, true, std::string("it cannot be opened: ") + std::strerror(errno)});
      continue;
    }
    const bool first = files_.empty();
    files_.push_back(std::move(f));
    if (first && fromIncluded && key == *from) textBase_ = seekOffset;
  }
}

bool LogFollower::readMore() {
  File& f = files_.front();
  if (textPos_ > 0) {
    text_.erase(0, textPos_);
    textBase_ += textPos_;
    textPos_ = 0;
  }
  const uint64_t want = textBase_ + text_.size();
  if (!f.decoded) {
    const size_t old = text_.size();
    text_.resize(old + kReadBytes);
    ssize_t n;
    do {
      n = ::pread(f.fd, &text_[old], kReadBytes, static_cast<off_t>(want));
    } while (n < 0 && errno == EINTR);
    text_.resize(old + static_cast<size_t>(n > 0 ? n : 0));
    return n > 0;
  }
  struct stat st;
  if (::fstat(f.fd, &st) != 0 || static_cast<uint64_t>(st.st_size) == decodedSize_) return false;
  decodedSize_ = static_cast<uint64_t>(st.st_size);
  uint64_t at = 0;  // decoded offset of the piece
  const size_t old = text_.size();
  // A record or frame cut short at the end is one being written: what comes
  // before it is whole. A corrupt one in a finished file shows as a file that
  // never ends (its tail is given up when the file is finished).
  const LogReadResult r = readLogFd(f.fd, key_ ? &*key_ : nullptr, [&](std::string_view piece) {
    const uint64_t end = at + piece.size();
    if (end > want) {
      const uint64_t skip = want > at ? want - at : 0;
      text_.append(piece.data() + skip, piece.size() - skip);
    }
    at = end;
  });
  decodeError_ = r.ok ? std::string() : r.error + " at offset " + std::to_string(r.offset);
  return text_.size() > old;
}

bool LogFollower::finished() {
  if (files_.size() < 2) return false;
  struct stat newer, older;
  if (::fstat(files_[1].fd, &newer) == 0 && newer.st_size > 0) return true;
  if (::fstat(files_.front().fd, &older) != 0) return true;
  const int64_t mtimeMs =
      static_cast<int64_t>(older.st_mtim.tv_sec) * 1000 + older.st_mtim.tv_nsec / 1000000;
  return nowMs() - mtimeMs >= finishGraceMs_;
}

std::optional<std::string_view> LogFollower::peek() {
  for (;;) {
    if (lineEnd_ != std::string::npos) {
      return std::string_view(text_.data() + textPos_, lineEnd_ - textPos_);
    }
    if (files_.empty()) return std::nullopt;
    const size_t newline = text_.find('\n', textPos_);
    if (newline != std::string::npos) {
      lineEnd_ = newline;
      continue;
    }
    struct stat st;
    if (::fstat(files_.front().fd, &st) == 0 && st.st_nlink == 0) {
      giveUp("it was deleted before it was read to its end");
      continue;
    }
    if (readMore()) continue;
    if (!finished()) return std::nullopt;
    if (readMore()) continue;  // written before the newer file began
    if (textPos_ < text_.size()) {
      lineEnd_ = text_.size();
      lastLineUnterminated_ = true;
      continue;
    }
    if (!decodeError_.empty()) {
      // Finished, yet it ends in a record that cannot be read (corrupt, or
      // encrypted without the key): what follows is unknown.
      skips_.push_back(Skip{files_.front().name, 0, true, "its text stops there: " + decodeError_});
    }
    closeFront();
  }
}

void LogFollower::pop(LogPosition* after) {
  if (lineEnd_ == std::string::npos) return;
  textPos_ = lastLineUnterminated_ ? lineEnd_ : lineEnd_ + 1;
  lineEnd_ = std::string::npos;
  lastLineUnterminated_ = false;
  after->file = files_.front().name;
  after->offset = textBase_ + textPos_;
}

std::vector<LogFollower::Skip> LogFollower::takeSkips() {
  std::vector<Skip> out;
  out.swap(skips_);
  return out;
}

void LogFollower::giveUp(const std::string& why) {
  // Everything still in the file from here: read to count, never sent.
  while (readMore()) {
  }
  Skip skip{files_.front().name, 0, false, why};
  skip.lines = static_cast<uint64_t>(std::count(text_.begin() + static_cast<ptrdiff_t>(textPos_),
                                                text_.end(), '\n'));
  if (!text_.empty() && textPos_ < text_.size() && text_.back() != '\n') ++skip.lines;
  if (skip.lines > 0) skips_.push_back(std::move(skip));
  closeFront();
}

void LogFollower::closeFront() {
  ::close(files_.front().fd);
  files_.pop_front();
  text_.clear();
  textBase_ = 0;
  textPos_ = 0;
  lineEnd_ = std::string::npos;
  lastLineUnterminated_ = false;
  decodedSize_ = 0;
  decodeError_.clear();
}

}  // namespace relp
}  // namespace net
}  // namespace muon
