// LogFile: the files a log is written to, rolled by size and by day.
//
// File names are basename.YYYYmmdd-HHMMSS.hostname.pid.log, in the Logger's
// time zone. A roll in the same second as the previous one appends a
// sequence number (…pid.log.1, …pid.log.2) rather than reuse a name: no file
// is ever overwritten. Lines are written through a 64 KiB buffer and flushed
// every flushInterval seconds (checked every checkEveryN appends).
//
// Failures never assert and never stop the caller: a file that cannot be
// opened or written is reported on stderr (at most once per kReportInterval
// for the same errno, separately for opening and for writing), its bytes
// counted as lost, and LogFile tries again at the next flush. When writing
// works again one line on stderr says so; the next failure of a kind that
// has worked again is reported at once. With threadSafe = true any thread may call append/flush;
// with false, one thread only (AsyncLogging's backend).
//
// Options (all off by default, so a LogFile keeps every file it makes):
// retention deletes this basename's oldest files, at construction and at
// every roll; the current-file link keeps basename.log pointing at the file
// being written, for tail -F.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "muon/base/Env.h"
#include "muon/base/FileStage.h"
#include "muon/base/FileUtil.h"
#include "muon/base/LineFormat.h"
#include "muon/base/LogFilePin.h"
#include "muon/base/Timestamp.h"

namespace muon {
namespace detail {
struct LineEncoder;
}  // namespace detail

class LogFile {
 public:
  using ClockFunc = Timestamp (*)();

  struct Options {
    // Retention, applied when the LogFile starts (a short-lived process
    // cleans up too) and after every roll. 0 means no limit. Only files
    // this basename's pattern made in its directory are candidates
    // (basename.YYYYmmdd-HHMMSS.host.pid.log[.N], with any .zst/.enc
    // suffix), never the file being written, never a symbolic link; the
    // oldest go first, by the time in their names.
    // At most this many files, the current one included.
    size_t maxFiles = 0;
    // At most this many bytes in those files together, the current one included.
    uint64_t maxTotalBytes = 0;
    // No file whose name's time is more than this many seconds old.
    int64_t maxAgeSeconds = 0;
    // A reader's pin (LogFilePin.h, e.g. a LogShipper's): the pinned file
    // and every newer one are kept whatever the three limits above say,
    // until all the files together pass pinnedMaxTotalBytes, the hard cap
    // (0: none, pinned files are never deleted). Past the cap the oldest
    // go first as usual, pinned or not; the reader notices, counts what it
    // lost and says so. Null: no pin.
    std::shared_ptr<const LogFilePin> pin;
    uint64_t pinnedMaxTotalBytes = 0;
    // Keep basename.log, a symbolic link to the current file, replaced
    // atomically at each roll (glog's habit), so that `tail -F basename.log`
    // follows the log across rolls. Off by default: it adds a file to the
    // directory, which scripts that glob basename.* would see.
    bool currentLink = false;
    // Permissions of new log files: owner and group may read, others not
    // (logs hold what users did). The umask may take bits away, never add.
    mode_t fileMode = 0640;
    // Write through a 64 KiB buffer (lines), or each append at once as one
    // chunk (AsyncLogging's 4 MiB buffers: it turns this off).
    bool buffered = true;
    // What the files hold: muon's text lines, JSON lines (JsonLines.h) or
    // logfmt lines (LineFormat.h). For JSON and logfmt, whoever formats a
    // statement's line encodes it (AsyncLogging's backend, a statement
    // through such a sink, a recovery); append() writes a line already in
    // the format (a JSON object, a logfmt line starting "time=") as it is and
    // turns any other (a text line appended directly) into one whose message
    // is its whole text after the level, before the stages. Chunks given to
    // append() must be whole lines.
    LineFormat format = LineFormat::kText;
    // The steps each chunk takes into the file, in order (FileStage.h):
    // e.g. ZstdStage then AesGcmStage. Empty: plain text.
    std::vector<std::shared_ptr<FileStage>> stages;
    // Tests: the time source for names, rolls and retention (default
    // Timestamp::now). Set here rather than with setClock() when the first
    // file and the first retention pass must see it.
    ClockFunc clock = nullptr;
    // Tests: the file-system calls (Env.h) for the log files, the current-file
    // link and retention (default Env::defaultEnv(), the system calls). Must
    // outlive the LogFile.
    Env* env = nullptr;
  };

  LogFile(const std::string& basename, off_t rollSize, bool threadSafe = true,
          int flushInterval = 3, int checkEveryN = 1024);
  LogFile(const std::string& basename, off_t rollSize, bool threadSafe, int flushInterval,
          int checkEveryN, const Options& options);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // What became of these bytes (error: the errno of the first failure, or
  // of the open that failed when there is no file; 0 when nothing was
  // lost). A buffered append writes earlier bytes when the buffer fills, a
  // flush or a roll inside it writes the buffer out: their failures count
  // too. Every failure is also counted in stats() and reported on stderr.
  // Lines in another format than the file's (text handed to a JSON file)
  // are encoded first.
  WriteResult append(const char* logline, size_t len);
  // As append, for whole lines already in the file's format (its encoder's
  // own, as AsyncLogging's backend writes them): written as they are,
  // unlooked at.
  WriteResult appendEncoded(const char* lines, size_t len);
  WriteResult flush();
  // Closes the current file and starts a new one. False if it cannot be
  // created; the current file is then kept and written to. This is also the
  // reopen after an outside rotation (logrotate, SIGHUP): names carry the
  // time, so "reopen" means a new file, never the old name again. Not
  // async-signal-safe (it takes the lock and allocates): a signal handler
  // sets a flag and the writing thread calls this, as
  // AsyncLogging::requestReopen does.
  bool rollFile();

  struct Stats {
    uint64_t writtenBytes = 0;  // bytes that reached a file
    uint64_t lostBytes = 0;     // bytes given to append() that never will
    uint64_t writeErrors = 0;   // failed write(2) or open(2) calls
    uint64_t filesCreated = 0;
  };
  Stats stats() const;
  // Where the next append lands if it goes to the current file: the file
  // and its size as the writes left it (buffered bytes counted as written),
  // known without flushing or asking the file system. Empty while no file
  // is open (or its identity is unknown).
  FilePosition nextPosition() const;
  // The file being written ("" while none could be opened).
  std::string currentFileName() const;
  // What the files hold (Options::format).
  LineFormat format() const { return options_.format; }

  // Seams for tests, to be set before the first append.
  void setWriteFunction(WriteFunction write);
  void setClock(ClockFunc clock);

  // basename.YYYYmmdd-HHMMSS.hostname.pid.log for `now` in the Logger's zone.
  static std::string logFileName(const std::string& basename, Timestamp now);
  // YYYYmmdd-HHMMSS of `t` in the Logger's zone, as in the file names.
  static std::string logFileTime(Timestamp t);
  // Whether `name` (no directory) is a log file of basename `prefix`, as
  // logFileName() makes them, with a roll number and .zst/.enc suffixes;
  // if so, the time in it and the roll number (0 if none).
  static bool parseLogFileName(const std::string& prefix, const std::string& name,
                               std::string* time, long* sequence);

  static constexpr int kReportInterval = 10;  // seconds between two reports of one error

 private:
  WriteResult appendUnlocked(const char* logline, size_t len);
  WriteResult flushUnlocked();
  // *flushed (if given) gets what writing out the closing file's buffer did.
  bool rollFileUnlocked(Timestamp now, WriteResult* flushed = nullptr);
  // Writes out the closing file's buffer, folds its counters into totals_.
  WriteResult retire();
  // After a new file is opened: the link, then the retention pass.
  void updateCurrentLink();
  void applyRetention(Timestamp now);
  // Reports a write-side call's failure, or the end of a reported one.
  void report(const WriteResult& r);
  // The last report of one kind of failure (creating a file, writing one),
  // for the rate limit; cleared when that kind of call works again.
  struct ErrorReport {
    int savedErrno = 0;
    int64_t second = 0;
  };
  void reportError(ErrorReport* last, const char* what, const std::string& path, int savedErrno);
  int64_t localDay(Timestamp t) const;

  const std::string basename_;
  const off_t rollSize_;
  const int flushInterval_;
  const int checkEveryN_;
  const Options options_;
  const detail::LineEncoder& encoder_;  // options_.format's
  std::string encoded_;  // not text: a chunk's lines in the format; under the lock
  Env* const env_;  // options_.env, or the default

  std::unique_ptr<std::mutex> mutex_;  // null unless threadSafe
  WriteFunction write_;
  ClockFunc clock_;
  std::unique_ptr<AppendFile> file_;
  Stats totals_;  // of the files already closed, plus open failures
  int count_ = 0;
  int64_t currentDay_ = 0;
  int64_t lastRollSecond_ = 0;
  int sameSecondRolls_ = 0;
  int64_t lastFlushSecond_ = 0;
  ErrorReport createReport_;
  ErrorReport writeReport_;
  ErrorReport cleanupReport_;  // retention and the current-file link
};

}  // namespace muon
