// LogFollower: reads the lines of every log file of one muon basename, in
// order (the rolled files, then the one being written; plain, .zst, .enc
// through base/filestages/LogReader.h), and keeps reading as they grow and
// roll. It only reads: the caller (LogShipper) says when to look again.
//
// Order: by the time and roll number in the names (LogFile::parseLogFileName),
// as retention orders them. A position is a file's name and the bytes of its
// text read so far (for .zst and .enc files: of the decoded text, which is
// decoded again from the file's start whenever it grew).
//
// Only files newer than the newest one already listed are added: a file
// that appears later under an older name (copied or renamed in) is not
// read. Two writers of one basename that start files in the same second
// are ordered by their names (host, pid), not by which came first.
//
// A file is finished when a newer file of the basename exists and either the
// newer one has bytes (its writer has moved on) or the older one has not
// changed for finishGraceMs (a buffered writer's last bytes are in by then).
// A finished file's last line without '\n' is taken as a line.
//
// Files are opened as soon as they are listed (at most kMaxOpenFiles at
// once), so that a file deleted later (retention) is still read far enough
// to count what it held: a file found deleted before it was read to its end
// is given up, its remaining lines counted and reported (takeSkips()).
// A file that was deleted before it could be opened is reported with its
// lines unknown. A record that cannot be read (corrupt, or encrypted without
// the key) ends its file once the file is finished, reported with the lines
// after it unknown.
//
// Threads: one (the shipper's loop); not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "muon/base/filestages/AesGcmStage.h"

namespace muon {
namespace net {
namespace relp {

struct LogPosition {
  std::string file;     // a file's name, without its directory ("": before the oldest)
  uint64_t offset = 0;  // bytes of its text read
};

class LogFollower {
 public:
  static constexpr size_t kMaxOpenFiles = 64;
  static constexpr size_t kReadBytes = 256 * 1024;  // one read of a plain file

  struct Skip {
    std::string file;
    uint64_t lines = 0;  // lines given up (0 with `unknown`)
    bool unknown = false;
    std::string why;
  };

  // `key` (may be null) decrypts .enc files; copied.
  LogFollower(const std::string& basename, const AesKey* key, int finishGraceMs);
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;

  // Where to start: after `from` (a file of the basename and the bytes of
  // its text already taken; "" for the oldest file). A file named that is
  // gone is reported as a skip, and reading starts at the next newer file.
  void seek(const LogPosition& from);
  // Lists the directory again: new files are opened.
  void rescan();
  // The next whole line (without '\n'), or nullopt if none is there now.
  // It stays the next until pop().
  std::optional<std::string_view> peek();
  // Takes the line peek() returned; `after` gets the position after it.
  void pop(LogPosition* after);
  // Skips found since the last call.
  std::vector<Skip> takeSkips();
  // The oldest file not finished: what a LogFilePin should hold.
  std::string currentFile() const { return files_.empty() ? std::string() : files_.front().name; }
  const std::string& directory() const { return dir_; }

 private:
  struct File {
    std::string name;
    std::string time;  // ordering key, from the name
    long sequence = 0;
    int fd = -1;
    bool decoded = false;  // .zst/.enc: decode the whole file
  };
  using Key = std::tuple<std::string, long, std::string>;
  static Key keyOf(const File& f) { return Key(f.time, f.sequence, f.name); }

  bool parse(const std::string& name, File* f) const;
  // More text of the current file into text_; false if there was none.
  bool readMore();
  // Whether files_.front() is finished (see above).
  bool finished();
  // Gives up files_.front(): counts its lines left, reports why.
  void giveUp(const std::string& why);
  void closeFront();

  const std::string basename_;
  const std::string dir_;
  const std::string prefix_;
  std::optional<AesKey> key_;
  const int finishGraceMs_;

  std::deque<File> files_;          // opened, oldest first; front() is being read
  std::optional<Key> last_;         // the newest file seen: only newer ones are added
  std::optional<LogPosition> seekTo_;  // applied when the file is listed
  std::string text_;                // the front file's text from textBase_
  uint64_t textBase_ = 0;           // its offset in the file's text
  size_t textPos_ = 0;              // next line's start in text_
  size_t lineEnd_ = std::string::npos;  // peek()'s line end in text_ (npos: none peeked)
  bool lastLineUnterminated_ = false;   // peek()'s line is a finished file's tail
  uint64_t decodedSize_ = 0;        // decoded files: file size at the last decode
  std::string decodeError_;         // decoded files: where and why the last decode stopped early
  std::vector<Skip> skips_;
};

}  // namespace relp
}  // namespace net
}  // namespace muon
