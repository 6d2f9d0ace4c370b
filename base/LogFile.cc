#include "muon/base/LogFile.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
    : basename_(basename),
      rollSize_(rollSize),
      flushInterval_(flushInterval),
      checkEveryN_(checkEveryN > 0 ? checkEveryN : 1),
      mutex_(threadSafe ? new std::mutex : nullptr),
      clock_(&Timestamp::now) {
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

void LogFile::append(const char* logline, size_t len) {
  MaybeLock lock(mutex_.get());
  appendUnlocked(logline, len);
}

void LogFile::flush() {
  MaybeLock lock(mutex_.get());
  flushUnlocked();
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

bool LogFile::position(FilePosition* pos) {
  MaybeLock lock(mutex_.get());
  if (!file_) return false;
  WriteMark before = markWrites();
  bool ok = file_->position(pos);
  reportWrites(before);
  return ok;
}

std::string LogFile::currentFileName() const {
  MaybeLock lock(mutex_.get());
  return file_ ? file_->path() : std::string();
}

void LogFile::appendUnlocked(const char* logline, size_t len) {
  if (!file_) {
    // Retry the open at most once a second, not once a line.
    Timestamp now = clock_();
    if (now.secondsSinceEpoch() == lastRollSecond_ || !rollFileUnlocked(now)) {
      totals_.lostBytes += len;
      return;
    }
  }
  WriteMark before = markWrites();
  file_->append(logline, len);
  reportWrites(before);

  if (file_->sizeIncludingBuffered() > static_cast<uint64_t>(rollSize_)) {
    rollFileUnlocked(clock_());
  } else if (++count_ >= checkEveryN_) {
    count_ = 0;
    Timestamp now = clock_();
    if (localDay(now) != currentDay_) {
      rollFileUnlocked(now);
    } else if (now.secondsSinceEpoch() - lastFlushSecond_ >= flushInterval_) {
      flushUnlocked();
    }
  }
}

void LogFile::flushUnlocked() {
  lastFlushSecond_ = clock_().secondsSinceEpoch();
  if (!file_) {
    rollFileUnlocked(clock_());
    return;
  }
  WriteMark before = markWrites();
  file_->flush();
  reportWrites(before);
  // Deleted or renamed under us (logrotate, an operator): start a new file,
  // or every later line would go to a file nobody can find.
  struct stat byFd, byName;
  if (::fstat(file_->fd(), &byFd) == 0 &&
      (byFd.st_nlink == 0 || ::stat(file_->path().c_str(), &byName) != 0 ||
       byName.st_ino != byFd.st_ino || byName.st_dev != byFd.st_dev)) {
    rollFileUnlocked(clock_());
  }
}

bool LogFile::rollFileUnlocked(Timestamp now) {
  int64_t second = now.secondsSinceEpoch();
  std::string name = logFileName(basename_, now);
  // Several rolls in one second share the timestamp; a sequence number keeps
  // their names apart, and O_EXCL makes sure no file is ever reused.
  int sequence = (second == lastRollSecond_) ? sameSecondRolls_ + 1 : 0;
  lastRollSecond_ = second;
  int savedErrno = 0;
  std::unique_ptr<AppendFile> file;
  for (int attempt = 0; attempt < 1000; ++attempt, ++sequence) {
    std::string path = sequence == 0 ? name : name + "." + std::to_string(sequence);
    file = AppendFile::create(path, write_, &savedErrno);
    if (file || savedErrno != EEXIST) {
      if (!file) name = path;
      break;
    }
  }
  sameSecondRolls_ = sequence;
  if (!file) {
    ++totals_.writeErrors;
    reportError(&createReport_, "cannot create", name, savedErrno);
    return false;
  }
  retire();
  file_ = std::move(file);
  ++totals_.filesCreated;
  createReport_ = ErrorReport();  // a later failure to create is news again
  currentDay_ = localDay(now);
  lastFlushSecond_ = second;
  return true;
}

void LogFile::retire() {
  if (!file_) return;
  WriteMark before = markWrites();
  file_->flush();
  reportWrites(before);
  totals_.writtenBytes += file_->writtenBytes();
  totals_.lostBytes += file_->lostBytes();
  totals_.writeErrors += file_->writeErrors();
  file_.reset();
}

void LogFile::reportWrites(WriteMark before) {
  if (file_->writeErrors() != before.errors) {
    reportError(&writeReport_, "write to", file_->path(), file_->lastError());
  } else if (writeReport_.savedErrno != 0 && file_->writtenBytes() > before.written) {
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

std::string LogFile::logFileName(const std::string& basename, Timestamp now) {
  DateTime dt = Logger::timeZone().toLocalTime(now.secondsSinceEpoch());
  char timebuf[32];
  std::snprintf(timebuf, sizeof timebuf, ".%04d%02d%02d-%02d%02d%02d.", dt.year, dt.month, dt.day,
                dt.hour, dt.minute, dt.second);
  return basename + timebuf + hostname() + "." + std::to_string(::getpid()) + ".log";
}

}  // namespace muon
