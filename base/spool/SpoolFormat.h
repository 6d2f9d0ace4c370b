// The crash-safe spool's format, described once: what LogSpool (the writer)
// lays out and SpoolRecovery (the reader) takes apart, as LevelDB's
// log_format.h serves its log writer and reader. The bytes on disk, the
// slot states and their changes, the index entries, and the file names.
// Internal to muon's logging: users include LogSpool.h or SpoolRecovery.h.
//
// Layout (every part page-aligned; docs/logging.md has the picture):
//   page 0              Header: magic, version, sizes, a random key, pid;
//                       the messages dropped and those reported, and while a
//                       "Dropped log messages" report is being written, the
//                       log file's identity and size before that write
//   pages 1..slots      one Slot per buffer: state, generation, order, and
//                       while it is being written, the log file's identity
//                       and size before the write
//   then slots x bufferSize of buffers.
// A recorded path is the log file's as its writer opened it: absolute for
// AsyncLogging (its basename is made absolute), relative for a recovery
// given a relative one. The drop counts and the report record came after
// the first spools were written: there they are zero, which reads as
// "nothing dropped", so a spool of either build is read by either.
//
// A buffer holds lines from its front and an index of kEntrySize-byte
// entries from its back: entry n (at bufferSize - 16 (n+1)) says where
// message n lies. A producer copies its line, then stores the entry's first
// word (offset, length) and last its second word, a check computed from the
// spool's key, the buffer's generation, n and the first word (record()).
// A reader takes a message only when its check is right. A message is a
// text line, or, when its length has kRecordedLine set, a recorded line
// (RecordFormatter.h: a statement's line with its operands not yet
// formatted), which the backend or a recovery formats as it writes it out
// (Lines::appendMessage()). Version 1 spools hold text lines only.
//
// Slot states: kFree (nothing to recover), kActive (current, queued or taken
// by the backend: recover it), kWriting (being written at the recorded
// position: recovery first cuts the file back to that size). The header's
// reportState takes kFree or kWriting. A state is stored last when it
// changes (release), after the fields it vouches for.
//
// File names: <basename>.<pid>.spool, or <basename>.<pid>.<n>.spool when
// another spool has that name; <basename>.<pid>.spool.new while it is being
// made (no recovery reads it; an abandoned one is removed).
//
// Thread safety: the functions are pure or act on the memory they are given;
// the callers order them (LogSpool.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "muon/base/FileUtil.h"
#include "muon/base/internal/LineEncoders.h"

namespace muon {
namespace spool {

constexpr char kMagic[8] = {'M', 'U', 'O', 'N', 'S', 'P', 'L', '1'};
// What this build writes; it reads kOldestVersion to kVersion. Version 3:
// recorded lines may hold the one-operand field tags (LogOperands.h), which
// a version 2 reader does not decode.
constexpr uint32_t kVersion = 3;
constexpr uint32_t kOldestVersion = 1;
constexpr size_t kPageSize = 4096;
constexpr size_t kMaxSlots = 1024;  // more is taken as a corrupt header
constexpr uint64_t kEntrySize = 16;
// In an entry's length: the message is a recorded line (version 2). A
// message is at most a buffer, far below this bit.
constexpr uint64_t kRecordedLine = uint64_t{1} << 31;
constexpr uint64_t kLengthMask = kRecordedLine - 1;

enum SlotState : uint64_t { kFree = 0, kActive = 1, kWriting = 2 };

// Where a write started: the log file and its size before the write, so
// that recovery can cut the file back to it. kPathSize makes the record
// fill the rest of its page.
template <size_t kPathSize>
struct Position {
  uint64_t device;
  uint64_t inode;
  uint64_t size;
  char path[kPathSize];
};

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t slotCount;
  uint64_t bufferSize;
  uint64_t key;
  uint64_t pid;
  // Messages and buffers dropped since the spool was made, and those of
  // them reported in a log file.
  uint64_t droppedBuffers;
  uint64_t droppedMessages;
  uint64_t reportedBuffers;
  uint64_t reportedMessages;
  // kWriting while a report is being written at reportAt; the reported
  // counts were reportedBuffersBefore/reportedMessagesBefore until then.
  uint64_t reportState;  // stored last when it changes
  uint64_t reportedBuffersBefore;
  uint64_t reportedMessagesBefore;
  Position<kPageSize - 15 * sizeof(uint64_t)> reportAt;
};
static_assert(sizeof(Header) == kPageSize, "the header fills page 0");

struct Slot {
  uint64_t state;  // SlotState; stored last when it changes
  uint64_t generation;
  uint64_t sequence;  // order in which buffers became current, from 1
  Position<kPageSize - 6 * sizeof(uint64_t)> at;  // kWriting: where the write started
};
static_assert(sizeof(Slot) == kPageSize, "one slot header per page");

// Offset of slot i's header.
inline size_t slotOffset(size_t i) { return kPageSize * (1 + i); }
// Offset of the first buffer.
inline size_t buffersOffset(size_t slots) { return slotOffset(slots); }
// Offset of buffer i.
inline size_t bufferOffset(size_t slots, size_t bufferSize, size_t i) {
  return buffersOffset(slots) + i * bufferSize;
}
// The size of a whole spool.
inline size_t spoolSize(size_t slots, size_t bufferSize) {
  return bufferOffset(slots, bufferSize, slots);
}
// Slot i's header in a mapped spool.
inline Slot* slotAt(char* spool, size_t i) {
  return reinterpret_cast<Slot*>(spool + slotOffset(i));
}

// The index (see above). Producer side: message n lies at [offset,
// offset + len) of `buffer` (len with kRecordedLine for a recorded line).
inline uint64_t mix(uint64_t x) {
  // A 64-bit finaliser: every input bit changes every output bit.
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}
inline uint64_t sealFor(uint64_t key, uint64_t generation) {
  return mix(key ^ (generation * 0xC2B2AE3D27D4EB4Full));
}
inline uint64_t entryCheck(uint64_t seal, uint64_t n, uint64_t word) {
  return mix(seal ^ word ^ (n * 0x9E3779B97F4A7C15ull));
}
inline void record(char* buffer, size_t bufferSize, uint64_t seal, uint64_t n, uint64_t offset,
                   uint64_t len) {
  uint64_t* entry = reinterpret_cast<uint64_t*>(buffer + bufferSize - (n + 1) * kEntrySize);
  uint64_t word = (offset << 32) | len;
  __atomic_store_n(&entry[0], word, __ATOMIC_RELAXED);
  // Release: the line and the first word are in memory before the check
  // that vouches for them (for a kill, the order of the stores is what counts).
  __atomic_store_n(&entry[1], entryCheck(seal, n, word), __ATOMIC_RELEASE);
}

// What a buffer's lines become in the log file: text messages as they are,
// recorded lines formatted. Grows as needed and keeps its memory; one
// owner at a time.
class Lines {
 public:
  // Recorded lines become text lines, or lines of another format (their
  // head's time read in the Logger's zone when the Lines is made).
  explicit Lines(LineFormat format = LineFormat::kText);
  ~Lines();
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }
  void append(const char* p, size_t n);
  // Appends message [p, p+n), a recorded line if `recorded`. False, with
  // nothing appended, for a recorded line that does not decode.
  bool appendMessage(const char* p, size_t n, bool recorded);

 private:
  void reserveMore(size_t n);
  const detail::LineEncoder& encoder_;
  std::unique_ptr<TimeZone> zone_;  // not text only
  std::string encoded_;             // not text only: one line's
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Appends the first `messages` messages of a live buffer (every one of
// them committed, their entries trusted: no check) to `out`. Returns how
// many recorded lines did not decode (left out).
uint64_t appendMessages(const char* buffer, size_t bufferSize, uint64_t messages, Lines* out);

// Slot state changes: kWriting at `pos` (the fields first, the state
// last); kFree (everything in it written, or dropped on purpose).
void markWriting(Slot* slot, const FilePosition& pos);
inline void markFree(Slot* slot) {
  __atomic_store_n(&slot->state, uint64_t{kFree}, __ATOMIC_RELEASE);
}
// Where slot's or the header's record says a write started.
template <size_t kPathSize>
FilePosition positionOf(const Position<kPathSize>& at) {
  FilePosition pos;
  pos.path.assign(at.path, strnlen(at.path, kPathSize));
  pos.device = at.device;
  pos.inode = at.inode;
  pos.size = at.size;
  return pos;
}

// The drop report: marks one being written at `pos`; then, once it is in
// the file, counts it as reported; or, for recovery, forgets one a dead
// process was writing (after cutting it out of the file).
void beginReport(Header* h, const FilePosition& pos);
void endReport(Header* h, uint64_t buffers, uint64_t messages);
void abandonReport(Header* h);

// <basename>.<pid>.spool (sequence > 0: <basename>.<pid>.<sequence>.spool).
std::string fileName(const std::string& basename, long pid, int sequence = 0);
// <basename>.<pid>.spool.new: the name a spool is made under.
std::string unpublishedName(const std::string& basename, long pid);

// A spool file name taken apart; the numbers as the name spells them.
struct Name {
  std::string basename;  // with the directory, if the name had one
  std::string pid;
  std::string sequence;    // "" for none
  bool unpublished = false;  // .spool.new
};
// Takes `name` (a path or a bare file name) apart into readings[], and
// returns how many there are: 0 when it is no spool name. A name with two
// numbers, <x>.<a>.<b>.spool, is basename <x>.<a> of pid <b> or basename
// <x> of pid <a> with sequence <b>: both readings are given, that one first;
// the pid in the spool's header tells which holds. A basename is never empty.
int parseName(const std::string& name, Name readings[2]);

}  // namespace spool
}  // namespace muon
