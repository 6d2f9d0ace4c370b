#include "muon/base/SpoolRecovery.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "muon/base/LogFile.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/internal/SpoolFormat.h"
#include "muon/base/Logging.h"
#include "muon/base/Timestamp.h"
#include "muon/base/internal/LineLayout.h"

namespace muon {

namespace {

uint64_t load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The lines of one buffer, from its index (see SpoolFormat.h): entry n is at
// bufferSize - 16 (n + 1). An entry counts only if its check is right and
// its line lies after the previous line and before the entry itself; gaps
// in the index are messages a kill cut short. A recorded line that does
// not decode (only crafted bytes have a right check and do not) counts as
// cut short too, so that writing the lines out cannot fail on one.
void readIndex(const char* buffer, size_t bufferSize, uint64_t seal, SpoolContents::Buffer* out) {
  uint64_t end = 0;        // end of the last line found
  uint64_t lastFound = 0;  // 1 + index of the last entry found
  char scratch[detail::RecordFormatter::kMaxLine];
  for (uint64_t n = 0; (n + 1) * spool::kEntrySize <= bufferSize; ++n) {
    uint64_t position = bufferSize - (n + 1) * spool::kEntrySize;
    if (position < end) break;  // the index has met the lines
    uint64_t word = load64(buffer + position);
    if (load64(buffer + position + 8) != spool::entryCheck(seal, n, word)) continue;
    uint64_t offset = word >> 32;
    uint64_t length = word & spool::kLengthMask;
    const bool recorded = (word & spool::kRecordedLine) != 0;
    if (length == 0 || offset < end || offset + length > position) continue;
    if (recorded && detail::formatRecordedLine(buffer + offset, length, scratch) == 0) continue;
    out->lines.push_back({offset, length, recorded});
    out->incomplete += n - lastFound;
    lastFound = n + 1;
    end = offset + length;
  }
}

// A buffer or report the dead process was writing: cut the file back to its
// size before that write, so it can be written again without a line twice.
// A relative path (the writer's working directory is not ours) names a file
// in the spool's directory, where the writer's log files are. Returns a note when that cannot be known (file gone or replaced).
std::string undoPartialWrite(const FilePosition& at, const std::string& spoolPath) {
  if (at.path.empty()) return "";  // no file was open: nothing was written
  const std::string path =
      at.path[0] == '/' ? at.path : directoryOf(spoolPath) + "/" + fileNameOf(at.path);
  int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_dev) != at.device ||
      static_cast<uint64_t>(st.st_ino) != at.inode) {
    if (fd >= 0) ::close(fd);
    return "'" + path + "' was moved or removed during the crash; its last lines may be repeated";
  }
  std::string note;
  if (static_cast<uint64_t>(st.st_size) > at.size &&
      ::ftruncate(fd, static_cast<off_t>(at.size)) != 0) {
    note = "cannot cut '" + path + "' back: " + strerror_tl(errno) +
           "; its last lines may be repeated";
  }
  ::close(fd);
  return note;
}

void appendError(std::string* error, const std::string& what) {
  if (!error->empty()) *error += "; ";
  *error += what;
}

// An open, locked, mapped spool; unmapped and closed when it goes.
class OpenSpool {
 public:
  ~OpenSpool() {
    if (map_ != MAP_FAILED) ::munmap(map_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  // False with *report filled when it cannot be had (or is live).
  bool open(const std::string& path, RecoveryReport* report) {
    fd_ = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0) {
      report->error = std::string("cannot open: ") + strerror_tl(errno);
      return false;
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) {
        report->live = true;
      } else {
        report->error = std::string("cannot lock: ") + strerror_tl(errno);
      }
      return false;
    }
    struct stat st;
    if (::fstat(fd_, &st) != 0) {
      report->error = std::string("cannot stat: ") + strerror_tl(errno);
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ < sizeof(spool::Header)) {
      report->error = "not a muon spool (" + std::to_string(size_) + " bytes)";
      return false;
    }
    map_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (map_ == MAP_FAILED) {
      report->error = std::string("cannot map: ") + strerror_tl(errno);
      return false;
    }
    return true;
  }
  char* data() const { return static_cast<char*>(map_); }
  size_t size() const { return size_; }
  spool::Header* header() const { return reinterpret_cast<spool::Header*>(data()); }
  spool::Slot* slot(size_t i) const { return spool::slotAt(data(), i); }

 private:
  int fd_ = -1;
  void* map_ = MAP_FAILED;
  size_t size_ = 0;
};

// Appends and flushes; false if any byte did not reach the file.
bool writeAll(LogFile* out, const char* data, size_t len) {
  WriteResult r = out->append(data, len);
  r += out->flush();
  return r.error == 0;
}

}  // namespace

bool readSpool(const char* data, size_t size, SpoolContents* contents, std::string* error) {
  spool::Header h;
  if (size < sizeof h) {
    *error = "not a muon spool (too short)";
    return false;
  }
  std::memcpy(&h, data, sizeof h);
  if (std::memcmp(h.magic, spool::kMagic, sizeof h.magic) != 0) {
    *error = "not a muon spool (bad magic)";
    return false;
  }
  if (h.version < spool::kOldestVersion || h.version > spool::kVersion) {
    *error = "spool version " + std::to_string(h.version) + " (this build reads " +
             std::to_string(spool::kOldestVersion) + " to " + std::to_string(spool::kVersion) +
             ")";
    return false;
  }
  if (h.slotCount == 0 || h.slotCount > spool::kMaxSlots || h.bufferSize < spool::kEntrySize ||
      h.bufferSize > (uint64_t{1} << 31) || h.bufferSize % spool::kPageSize != 0) {
    *error = "corrupt spool header";
    return false;
  }
  if (size < spool::spoolSize(h.slotCount, h.bufferSize)) {
    *error = "spool cut short (" + std::to_string(size) + " bytes)";
    return false;
  }
  contents->pid = static_cast<long>(h.pid);
  contents->buffers.clear();
  // A report cut short counts as not written: the counts from before it.
  contents->reportWriting = h.reportState == spool::kWriting;
  if (contents->reportWriting) contents->reportAt = spool::positionOf(h.reportAt);
  const uint64_t reportedBuffers =
      contents->reportWriting ? h.reportedBuffersBefore : h.reportedBuffers;
  const uint64_t reportedMessages =
      contents->reportWriting ? h.reportedMessagesBefore : h.reportedMessages;
  if (reportedBuffers > h.droppedBuffers || reportedMessages > h.droppedMessages ||
      (h.reportState != spool::kFree && !contents->reportWriting)) {
    appendError(error, "the drop counts make no sense");
    contents->unreported = SpoolContents::Drops();
  } else {
    contents->unreported.buffers = h.droppedBuffers - reportedBuffers;
    contents->unreported.messages = h.droppedMessages - reportedMessages;
  }
  for (size_t i = 0; i < h.slotCount; ++i) {
    spool::Slot s;
    std::memcpy(&s, data + spool::slotOffset(i), sizeof s);
    if (s.state == spool::kFree) continue;
    if (s.state != spool::kActive && s.state != spool::kWriting) {
      appendError(error, "slot " + std::to_string(i) + " has a bad state");
      continue;
    }
    SpoolContents::Buffer b;
    b.slot = i;
    b.sequence = s.sequence;
    b.writing = s.state == spool::kWriting;
    if (b.writing) b.writtenAt = spool::positionOf(s.at);
    readIndex(data + spool::bufferOffset(h.slotCount, h.bufferSize, i), h.bufferSize,
              spool::sealFor(h.key, s.generation), &b);
    contents->buffers.push_back(std::move(b));
  }
  std::sort(contents->buffers.begin(), contents->buffers.end(),
            [](const SpoolContents::Buffer& a, const SpoolContents::Buffer& b) {
              return a.sequence < b.sequence;
            });
  return true;
}

RecoveryReport recoverSpool(const std::string& path, const std::string& basename,
                            const std::function<LogFile*(long pid)>& output) {
  RecoveryReport report;
  report.spool = path;
  OpenSpool sp;
  if (!sp.open(path, &report)) return report;
  SpoolContents contents;
  if (!readSpool(sp.data(), sp.size(), &contents, &report.error)) return report;
  report.pid = contents.pid;
  if (!basename.empty() && fileNameOf(spoolBasename(path, contents.pid)) != fileNameOf(basename)) {
    report.foreign = true;  // <basename>.<digits>.<pid>.spool of a longer basename
    return report;
  }
  spool::Header* h = sp.header();
  bool everythingWritten = report.error.empty();  // else keep the spool for a closer look

  // A report the dead process (or a dead recovery) was writing goes: it is
  // written again below, with whatever else was not reported.
  if (contents.reportWriting) {
    std::string note = undoPartialWrite(contents.reportAt, path);
    if (!note.empty()) appendError(&report.error, note);
    spool::abandonReport(h);
  }
  const SpoolContents::Drops dropped = contents.unreported;
  uint64_t lines = 0;
  for (const auto& b : contents.buffers) {
    lines += b.lines.size();
    report.incomplete += b.incomplete;
  }
  LogFile* out = nullptr;
  std::string header;  // goes out with the first buffer, so it is undone with it
  if (lines > 0 || dropped.messages > 0) {
    out = output(contents.pid);
    if (!out) {
      appendError(&report.error, "no log file to write to");
      return report;
    }
    report.file = out->currentFileName();
  }
  const std::string now = Timestamp::now().toFormattedString();
  if (dropped.messages > 0) {
    const std::string text = detail::dropReport(
        Timestamp::now(), dropped.buffers, dropped.messages,
        "pid " + std::to_string(contents.pid) + " died before reporting them (recovered)");
    spool::beginReport(h, out->nextPosition());
    if (writeAll(out, text.data(), text.size())) {
      spool::endReport(h, dropped.buffers, dropped.messages);
      report.droppedMessages = dropped.messages;
    } else {
      appendError(&report.error, "cannot write to '" + out->currentFileName() + "'");
      return report;  // keep the spool: the next recovery tries again
    }
  }
  if (lines > 0) {
    char text[512];
    std::snprintf(text, sizeof text, "Recovered %llu lines of pid %ld from %s at %s",
                  static_cast<unsigned long long>(lines), contents.pid, path.c_str(), now.c_str());
    header = text;
    if (report.incomplete > 0) {
      header += "; " + std::to_string(report.incomplete) + " incomplete lines left out";
    }
    header += '\n';
  }
  // (No buffer has lines when there is no output.)
  spool::Lines text(out != nullptr ? out->format() : LineFormat::kText);
  for (const auto& b : contents.buffers) {
    if (b.writing) {
      std::string note = undoPartialWrite(b.writtenAt, path);
      if (!note.empty()) appendError(&report.error, note);
    }
    spool::Slot* slot = sp.slot(b.slot);
    if (!b.lines.empty()) {
      // From here a recovery killed half-way is undone like a dead backend's write.
      spool::markWriting(slot, out->nextPosition());
      // What the buffer held, as the bytes of a log file (readSpool made
      // sure every recorded line decodes).
      text.clear();
      text.append(header.data(), header.size());
      header.clear();
      const char* buffer = sp.data() + spool::bufferOffset(h->slotCount, h->bufferSize, b.slot);
      for (const auto& r : b.lines) text.appendMessage(buffer + r.offset, r.length, r.recorded);
      if (!writeAll(out, text.data(), text.size())) {
        appendError(&report.error, "cannot write to '" + out->currentFileName() + "'");
        everythingWritten = false;
        break;  // keep the spool: the next recovery tries again
      }
      report.lines += b.lines.size();
    }
    spool::markFree(slot);
  }
  // Unlinked while still locked, so no other recovery can open it meanwhile.
  if (everythingWritten) ::unlink(path.c_str());
  return report;
}

std::string spoolBasename(const std::string& spoolPath, long pid) {
  spool::Name readings[2];
  const int n = spool::parseName(spoolPath, readings);
  for (int i = 0; i < n; ++i) {
    if (!readings[i].unpublished && readings[i].pid == std::to_string(pid)) {
      return readings[i].basename;
    }
  }
  return "";
}

namespace {

// The names in `dir` that parseName() reads as a spool of `prefix` (any
// basename when `prefix` is empty), published or not. Full paths, sorted.
std::vector<std::string> spoolsIn(const std::string& dir, const std::string& prefix,
                                  bool unpublished) {
  std::vector<std::string> result;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return result;
  while (struct dirent* e = ::readdir(d)) {
    spool::Name readings[2];
    const int n = spool::parseName(e->d_name, readings);
    // A longer basename that starts with ours (<prefix>.db) is another
    // program's; <prefix>.<a>.<b>.spool may be ours, the pid in it tells.
    bool ours = false;
    for (int i = 0; i < n; ++i) {
      ours = ours || (readings[i].unpublished == unpublished &&
                      (prefix.empty() || readings[i].basename == prefix));
    }
    if (ours) result.push_back(dir + "/" + e->d_name);
  }
  ::closedir(d);
  std::sort(result.begin(), result.end());
  return result;
}

}  // namespace

std::vector<std::string> findSpools(const std::string& dir, const std::string& prefix) {
  return spoolsIn(dir, prefix, false);
}

std::vector<std::string> removeAbandonedSpools(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> removed;
  for (const std::string& path : spoolsIn(dir, prefix, true)) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    // Held: its creator lives. Renamed or made again since we opened it:
    // not the file we hold.
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && pathNamesFile(path, fd) &&
        ::unlink(path.c_str()) == 0) {
      removed.push_back(path);
    }
    ::close(fd);
  }
  return removed;
}

std::vector<RecoveryReport> recoverDeadSpools(const std::string& basename, LogFile* output) {
  std::vector<RecoveryReport> reports;
  const std::string dir = directoryOf(basename);
  const std::string prefix = fileNameOf(basename);
  for (const std::string& path : findSpools(dir, prefix)) {
    RecoveryReport r = recoverSpool(path, basename, [output](long) { return output; });
    if (!r.foreign) reports.push_back(std::move(r));
  }
  removeAbandonedSpools(dir, prefix);
  return reports;
}

}  // namespace muon
