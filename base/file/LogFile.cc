#include "muon/base/LogFile.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <vector>

#include "muon/base/internal/LineEncoders.h"
#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

namespace muon {

namespace {

std::string hostname() {
  char buf[256];
  if (::gethostname(buf, sizeof buf) == 0) {
    buf[sizeof buf - 1] = '\0';
    return buf;
  }
  return "unknownhost";
}

// The lock is optional (threadSafe = false for a single writer), so the
// guard takes a pointer.
class MaybeLock {
 public:
  explicit MaybeLock(std::mutex* m) : m_(m) {
    if (m_) m_->lock();
  }
  ~MaybeLock() {
    if (m_) m_->unlock();
  }
  MaybeLock(const MaybeLock&) = delete;
  MaybeLock& operator=(const MaybeLock&) = delete;

 private:
  std::mutex* m_;
};

}  // namespace

LogFile::LogFile(const std::string& basename, off_t rollSize, bool threadSafe, int flushInterval,
                 int checkEveryN)
    : LogFile(basename, rollSize, threadSafe, flushInterval, checkEveryN, Options()) {}

LogFile::LogFile(const std::string& basename, off_t rollSize, bool threadSafe, int flushInterval,
                 int checkEveryN, const Options& options)
    : basename_(basename),
      rollSize_(rollSize),
      flushInterval_(flushInterval),
      checkEveryN_(checkEveryN > 0 ? checkEveryN : 1),
      options_(options),
      encoder_(detail::encoderFor(options.format)),
      env_(options.env ? options.env : Env::defaultEnv()),
      mutex_(threadSafe ? new std::mutex : nullptr),
      clock_(options.clock ? options.clock : &Timestamp::now) {
  // Open at once, so a bad directory is reported at start, not at the first line.
  rollFileUnlocked(clock_());
}

LogFile::~LogFile() {
  MaybeLock lock(mutex_.get());
  retire();
}

void LogFile::setWriteFunction(WriteFunction write) {
  MaybeLock lock(mutex_.get());
  write_ = std::move(write);
  if (file_) file_->setWriteFunction(write_);
}

void LogFile::setClock(ClockFunc clock) {
  MaybeLock lock(mutex_.get());
  clock_ = clock ? clock : &Timestamp::now;
  currentDay_ = localDay(clock_());
}

WriteResult LogFile::append(const char* logline, size_t len) {
  MaybeLock lock(mutex_.get());
  const std::string_view chunk(logline, len);
  if (!detail::allEncodedLines(encoder_, chunk)) {
    const std::string_view lines = detail::encodeGivenLines(encoder_, chunk, &encoded_);
    return appendUnlocked(lines.data(), lines.size());
  }
  return appendUnlocked(logline, len);
}

WriteResult LogFile::appendEncoded(const char* lines, size_t len) {
  MaybeLock lock(mutex_.get());
  return appendUnlocked(lines, len);
}

WriteResult LogFile::flush() {
  MaybeLock lock(mutex_.get());
  return flushUnlocked();
}

bool LogFile::rollFile() {
  MaybeLock lock(mutex_.get());
  return rollFileUnlocked(clock_());
}

LogFile::Stats LogFile::stats() const {
  MaybeLock lock(mutex_.get());
  Stats s = totals_;
  if (file_) {
    s.writtenBytes += file_->writtenBytes();
    s.lostBytes += file_->lostBytes();
    s.writeErrors += file_->writeErrors();
  }
  return s;
}

FilePosition LogFile::nextPosition() const {
  MaybeLock lock(mutex_.get());
  FilePosition pos;
  if (file_ && !file_->nextPosition(&pos)) pos = FilePosition();
  return pos;
}

std::string LogFile::currentFileName() const {
  MaybeLock lock(mutex_.get());
  return file_ ? file_->path() : std::string();
}

WriteResult LogFile::appendUnlocked(const char* logline, size_t len) {
  if (!file_) {
    // Retry the open at most once a second, not once a line.
    Timestamp now = clock_();
    if (now.secondsSinceEpoch() == lastRollSecond_ || !rollFileUnlocked(now)) {
      totals_.lostBytes += len;
      WriteResult lost;
      lost.error = createReport_.savedErrno != 0 ? createReport_.savedErrno : EIO;
      return lost;
    }
  }
  WriteResult r = file_->append(logline, len);
  report(r);

  if (file_->sizeIncludingBuffered() > static_cast<uint64_t>(rollSize_)) {
    rollFileUnlocked(clock_(), &r);
  } else if (++count_ >= checkEveryN_) {
    count_ = 0;
    Timestamp now = clock_();
    if (localDay(now) != currentDay_) {
      rollFileUnlocked(now, &r);
    } else if (now.secondsSinceEpoch() - lastFlushSecond_ >= flushInterval_) {
      r += flushUnlocked();
    }
  }
  return r;
}

WriteResult LogFile::flushUnlocked() {
  lastFlushSecond_ = clock_().secondsSinceEpoch();
  if (!file_) {
    rollFileUnlocked(clock_());
    return WriteResult();  // nothing was waiting to be written
  }
  WriteResult r = file_->flush();
  report(r);
  // Deleted or renamed under us (logrotate, an operator): start a new file,
  // or every later line would go to a file nobody can find.
  struct stat byFd, byName;
  if (::fstat(file_->fd(), &byFd) == 0 &&
      (byFd.st_nlink == 0 || env_->stat(file_->path().c_str(), &byName) != 0 ||
       byName.st_ino != byFd.st_ino || byName.st_dev != byFd.st_dev)) {
    rollFileUnlocked(clock_(), &r);
  }
  return r;
}

bool LogFile::rollFileUnlocked(Timestamp now, WriteResult* flushed) {
  int64_t second = now.secondsSinceEpoch();
  std::string name = logFileName(basename_, now);
  // Several rolls in one second share the timestamp; a sequence number keeps
  // their names apart, and O_EXCL makes sure no file is ever reused.
  int sequence = (second == lastRollSecond_) ? sameSecondRolls_ + 1 : 0;
  lastRollSecond_ = second;
  int savedErrno = 0;
  std::string suffixes;  // basename...log[.N].zst.enc: each stage names its step
  for (const auto& stage : options_.stages) suffixes += stage->suffix();
  std::unique_ptr<AppendFile> file;
  for (int attempt = 0; attempt < 1000; ++attempt, ++sequence) {
    std::string path = (sequence == 0 ? name : name + "." + std::to_string(sequence)) + suffixes;
    file = AppendFile::create(path, write_, &savedErrno, options_.buffered, options_.fileMode,
                              env_);
    if (file || savedErrno != EEXIST) {
      if (!file) name = path;
      break;
    }
    // Taken. A symbolic link where our next file goes was planted (names are
    // predictable): say so, and take the next name rather than follow it.
    struct stat st;
    if (env_->lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      reportError(&createReport_, "create (a symbolic link is in the way)", path, ELOOP);
    }
  }
  sameSecondRolls_ = sequence;
  if (!file) {
    ++totals_.writeErrors;
    reportError(&createReport_, "create", name, savedErrno);
    return false;
  }
  WriteResult retired = retire();
  if (flushed) *flushed += retired;
  file_ = std::move(file);
  for (const auto& stage : options_.stages) stage->startFile();
  file_->setStages(&options_.stages);
  ++totals_.filesCreated;
  createReport_ = ErrorReport();  // a later failure to create is news again
  currentDay_ = localDay(now);
  lastFlushSecond_ = second;
  if (options_.currentLink) updateCurrentLink();
  applyRetention(now);
  return true;
}

void LogFile::updateCurrentLink() {
  // A new link under a temporary name, renamed over the old one: rename(2)
  // replaces it in one step, so basename.log always names an existing file
  // (the new one, or for a moment still the previous one).
  const std::string link = basename_ + ".log";
  const std::string temp = basename_ + ".log.new." + std::to_string(::getpid());
  const std::string target = fileNameOf(file_->path());  // relative: the directory may move
  env_->unlink(temp.c_str());
  if (env_->symlink(target.c_str(), temp.c_str()) != 0) {
    reportError(&cleanupReport_, "create link", temp, errno);
  } else if (env_->rename(temp.c_str(), link.c_str()) != 0) {
    reportError(&cleanupReport_, "replace link", link, errno);
    env_->unlink(temp.c_str());
  }
}

void LogFile::applyRetention(Timestamp now) {
  if (options_.maxFiles == 0 && options_.maxTotalBytes == 0 && options_.maxAgeSeconds <= 0) return;
  const std::string dir = directoryOf(basename_);
  const std::string prefix = fileNameOf(basename_);
  struct Candidate {
    std::string time;  // YYYYmmdd-HHMMSS, from the name
    long sequence;
    std::string path;
    uint64_t bytes;
  };
  std::vector<Candidate> old;
  uint64_t total = file_->sizeIncludingBuffered();
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      Candidate c;
      if (!parseLogFileName(prefix, e->d_name, &c.time, &c.sequence)) continue;
      c.path = dir + "/" + e->d_name;
      struct stat st;
      // lstat: a symbolic link is never followed out of the directory, nor deleted.
      if (c.path == file_->path() || env_->lstat(c.path.c_str(), &st) != 0 ||
          !S_ISREG(st.st_mode)) {
        continue;
      }
      c.bytes = static_cast<uint64_t>(st.st_size);
      total += c.bytes;
      old.push_back(std::move(c));
    }
    ::closedir(d);
  }
  std::sort(old.begin(), old.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.time, a.sequence, a.path) < std::tie(b.time, b.sequence, b.path);
  });
  // Names carry local time in the Logger's zone, as "now - maxAge" formatted
  // the same way: the two compare as strings.
  std::string oldestKept;
  if (options_.maxAgeSeconds > 0) {
    oldestKept = logFileTime(Timestamp::fromUnixTime(now.secondsSinceEpoch() - options_.maxAgeSeconds));
  }
  // The pinned file, as (time, sequence): it and newer ones are kept below the hard cap.
  std::string pinTime;
  long pinSequence = 0;
  const std::string pinned = options_.pin ? options_.pin->get() : std::string();
  const bool pinSet = !pinned.empty() && parseLogFileName(prefix, pinned, &pinTime, &pinSequence);
  size_t count = old.size() + 1;
  for (const Candidate& c : old) {
    bool tooMany = options_.maxFiles > 0 && count > options_.maxFiles;
    bool tooBig = options_.maxTotalBytes > 0 && total > options_.maxTotalBytes;
    bool tooOld = !oldestKept.empty() && c.time < oldestKept;
    if (!tooMany && !tooBig && !tooOld) break;  // the rest are newer
    const bool overHardCap = options_.pinnedMaxTotalBytes > 0 && total > options_.pinnedMaxTotalBytes;
    if (pinSet && !overHardCap &&
        std::tie(c.time, c.sequence) >= std::tie(pinTime, pinSequence)) {
      break;  // the reader has not finished it, nor the newer ones
    }
    if (env_->unlink(c.path.c_str()) != 0) {
      reportError(&cleanupReport_, "remove old log", c.path, errno);
      continue;
    }
    --count;
    total -= c.bytes;
  }
}

WriteResult LogFile::retire() {
  if (!file_) return WriteResult();
  WriteResult r = file_->flush();
  report(r);
  totals_.writtenBytes += file_->writtenBytes();
  totals_.lostBytes += file_->lostBytes();
  totals_.writeErrors += file_->writeErrors();
  file_.reset();
  return r;
}

void LogFile::report(const WriteResult& r) {
  if (r.error != 0) {
    reportError(&writeReport_, "write to", file_->path(), r.error);
  } else if (writeReport_.savedErrno != 0 && r.written > 0) {
    // A reported failure is over. Say so once, and forget it, so that the
    // next failure is reported at once rather than inside the quiet interval.
    Stats s = totals_;
    s.lostBytes += file_->lostBytes();
    std::fprintf(stderr, "muon::LogFile: writing to '%s' again (%llu bytes lost so far)\n",
                 file_->path().c_str(), static_cast<unsigned long long>(s.lostBytes));
    writeReport_ = ErrorReport();
  }
}

void LogFile::reportError(ErrorReport* last, const char* what, const std::string& path,
                          int savedErrno) {
  // stderr, not the log: the log is what failed. Rate-limited, so a full
  // disk does not turn into a flood of identical complaints.
  int64_t now = clock_().secondsSinceEpoch();
  if (savedErrno == last->savedErrno && now - last->second < kReportInterval) return;
  last->savedErrno = savedErrno;
  last->second = now;
  Stats s = totals_;
  if (file_) s.lostBytes += file_->lostBytes();
  std::fprintf(stderr, "muon::LogFile: %s '%s' failed: %s (%llu bytes lost so far)\n", what,
               path.c_str(), strerror_tl(savedErrno), static_cast<unsigned long long>(s.lostBytes));
}

int64_t LogFile::localDay(Timestamp t) const {
  int64_t second = t.secondsSinceEpoch();
  int offset = Logger::timeZone().toLocalTime(second).utcOffset;
  int64_t local = second + offset;
  return local >= 0 ? local / 86400 : (local - 86399) / 86400;
}

std::string LogFile::logFileTime(Timestamp t) {
  DateTime dt = Logger::timeZone().toLocalTime(t.secondsSinceEpoch());
  char timebuf[32];
  std::snprintf(timebuf, sizeof timebuf, "%04d%02d%02d-%02d%02d%02d", dt.year, dt.month, dt.day,
                dt.hour, dt.minute, dt.second);
  return timebuf;
}

std::string LogFile::logFileName(const std::string& basename, Timestamp now) {
  return basename + "." + logFileTime(now) + "." + hostname() + "." + std::to_string(::getpid()) +
         ".log";
}

bool LogFile::parseLogFileName(const std::string& prefix, const std::string& name,
                               std::string* time, long* sequence) {
  auto digits = [](const std::string& s, size_t from, size_t n) {
    if (from + n > s.size() || n == 0) return false;
    for (size_t i = from; i < from + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
  };
  auto endsWith = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (name.size() <= prefix.size() + 1 || name.compare(0, prefix.size() + 1, prefix + ".") != 0) {
    return false;
  }
  std::string rest = name.substr(prefix.size() + 1);
  // YYYYmmdd-HHMMSS.
  if (!digits(rest, 0, 8) || rest.size() < 17 || rest[8] != '-' || !digits(rest, 9, 6) ||
      rest[15] != '.') {
    return false;
  }
  *time = rest.substr(0, 15);
  rest = rest.substr(16);  // host.pid.log[.N][.zst][.enc]
  for (const char* suffix : {".enc", ".zst"}) {
    if (endsWith(rest, suffix)) rest.resize(rest.size() - std::strlen(suffix));
  }
  *sequence = 0;
  size_t dot = rest.rfind('.');
  if (dot != std::string::npos && digits(rest, dot + 1, rest.size() - dot - 1) &&
      endsWith(rest.substr(0, dot), ".log")) {
    *sequence = std::atol(rest.c_str() + dot + 1);
    rest.resize(dot);
  }
  if (!endsWith(rest, ".log")) return false;
  rest.resize(rest.size() - 4);
  dot = rest.rfind('.');  // host.pid
  return dot != std::string::npos && dot > 0 && digits(rest, dot + 1, rest.size() - dot - 1);
}

}  // namespace muon
