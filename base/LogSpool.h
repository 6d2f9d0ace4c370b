// LogSpool: the file a crash-safe AsyncLogging keeps its buffers in.
//
// The spool is a file in the log directory, basename.<pid>.spool, mapped
// MAP_SHARED. A line copied into a buffer is then in the kernel's page cache,
// which outlives the process: after kill -9, an OOM kill or abort() the next
// process (or muon-recover) finds the spool, sees that nobody holds its lock,
// and writes out what the dead process had not (SpoolRecovery.h).
//
// Layout (every part page-aligned; docs/logging.md has the picture):
//   page 0              SpoolHeader: magic, version, sizes, a random key, pid;
//                       the messages dropped and those reported, and while a
//                       "Dropped log messages" report is being written, the
//                       log file's identity and size before that write
//   pages 1..slots      one SlotHeader per buffer: state, generation, order,
//                       and while it is being written, the log file's
//                       identity and size before the write
//   then slots x bufferSize of buffers.
// A recorded path is the log file's as its writer opened it: absolute for
// AsyncLogging (its basename is made absolute), relative for a recovery
// given a relative one. Recovery reads a relative path as a file in the
// spool's directory, where the writer's log files are, so it finds the file
// whatever its own working directory. The drop counts and the report record
// came after the first spools were written: there they are zero, which
// reads as "nothing dropped", so a spool of either build is read by either.
// A buffer holds lines from its front, as in the default mode, and an index
// of 16-byte entries from its back: entry n (at bufferSize - 16 (n+1)) says
// where message n lies. A producer copies its line, then stores the entry's
// first word (offset, length) and last its second word, a check computed from
// the spool's key, the buffer's generation, n and the first word. Recovery
// takes a message only when its check is right: a line whose writer was
// killed before the last store is absent, never cut short; stale entries of
// an earlier generation, and data bytes however crafted (they do not know the
// key), fail the check. The backend writes the lines region only.
//
// Slot states: kFree (nothing to recover), kActive (current, queued or taken
// by the backend: recover it), kWriting (being written at the recorded
// position: recovery first cuts the file back to that size, so the buffer is
// written exactly once whether or not the write had happened).
//
// Drops (kDrop, or no memory for a buffer) are counted in the header before
// the dropped buffer is marked free, and counted as reported once the
// report is in the file. A report is written as a buffer is: kWriting at the
// recorded position, with the reported counts before it; recovery cuts an
// unfinished one out and reports whatever was dropped and not reported, so
// every drop is reported exactly once whenever the process dies. (A kill
// between counting a drop and freeing the buffer has the buffer's lines both
// recovered and reported dropped: reported too much, never too little.)
//
// Thread safety: create() and the destructor from one thread; activate(),
// markWriting() and markFree() for one slot, and countDropped(), are
// ordered by AsyncLogging's lock or owned by its backend; beginReport() and
// endReport() by the backend (one writer of the file); record() is called
// by producers, each on its own reservation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "muon/base/FileUtil.h"

namespace muon {

class LogFile;

// The on-disk layout, shared by LogSpool and the recovery reader.
namespace spool {

constexpr char kMagic[8] = {'M', 'U', 'O', 'N', 'S', 'P', 'L', '1'};
constexpr uint32_t kVersion = 1;
constexpr size_t kPageSize = 4096;
constexpr size_t kMaxSlots = 1024;  // more is taken as a corrupt header

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
  uint64_t state;  // LogSpool::SlotState; stored last when it changes
  uint64_t generation;
  uint64_t sequence;  // order in which buffers became current, from 1
  Position<kPageSize - 6 * sizeof(uint64_t)> at;  // kWriting: where the write started
};
static_assert(sizeof(Slot) == kPageSize, "one slot header per page");

// Offset of the first buffer.
inline size_t buffersOffset(size_t slots) { return kPageSize * (1 + slots); }
// Offset of slot i's header.
inline size_t slotOffset(size_t i) { return kPageSize * (1 + i); }

// Marks a slot kWriting at `pos`: the fields first, the state last.
void markWriting(Slot* slot, const FilePosition& pos);
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
// Where the next append to `out` lands, or an empty position when it has
// no file (then nothing can have been written, and nothing is cut).
FilePosition writePosition(LogFile* out);

// The drop report (see LogSpool above): marks one being written at `pos`;
// then, once it is in the file, counts it as reported; or, for recovery,
// forgets one a dead process was writing (after cutting it out of the file).
void beginReport(Header* h, const FilePosition& pos);
void endReport(Header* h, uint64_t buffers, uint64_t messages);
void abandonReport(Header* h);

}  // namespace spool

class LogSpool {
 public:
  static constexpr uint64_t kEntrySize = 16;
  enum SlotState : uint64_t { kFree = 0, kActive = 1, kWriting = 2 };

  // Creates and locks the spool of `basename` (its name: spoolName()) with
  // `slots` buffers of `bufferSize` bytes, under a temporary name that no
  // recovery looks at; publish() gives it its real name. nullptr and a
  // message in *error when it cannot.
  static std::unique_ptr<LogSpool> create(const std::string& basename, size_t slots,
                                          size_t bufferSize, std::string* error);
  // Unmaps; removes the spool file when nothing in it is left to recover
  // or report (a clean stop), keeps it otherwise.
  ~LogSpool();
  LogSpool(const LogSpool&) = delete;
  LogSpool& operator=(const LogSpool&) = delete;

  // Renames the spool to spoolName(): from here on a recovery finds it (and
  // leaves it alone while this process holds the lock). Never replaces a
  // file: if another spool has the name, a sequence number is added.
  bool publish(std::string* error);
  const std::string& path() const { return path_; }

  char* data(size_t slot) const { return buffers_ + slot * bufferSize_; }
  // Makes the slot's pages resident and writable now, so that producers
  // take no page faults in it. Best effort.
  void prefault(size_t slot) const;
  // Gives the slot's memory back (a burst is over); its disk blocks stay.
  void release(size_t slot) const;

  // The slot becomes a fresh current buffer: a new generation, the next
  // place in the order, state kActive. Returns the seal that record() needs.
  uint64_t activate(size_t slot);
  // The backend is about to write the slot at `pos`.
  void markWriting(size_t slot, const FilePosition& pos);
  // Everything in the slot is written (or dropped on purpose).
  void markFree(size_t slot);

  // Counts messages dropped (before their buffer is marked free).
  void countDropped(uint64_t buffers, uint64_t messages);
  // The backend is about to write a drop report at `pos`; it is written.
  void beginReport(const FilePosition& pos) { spool::beginReport(header(), pos); }
  void endReport(uint64_t buffers, uint64_t messages) {
    spool::endReport(header(), buffers, messages);
  }

  // Producer side: message n lies at [offset, offset + len) of `buffer`.
  static void record(char* buffer, size_t bufferSize, uint64_t seal, uint64_t n,
                     uint64_t offset, uint64_t len) {
    uint64_t* entry = reinterpret_cast<uint64_t*>(buffer + bufferSize - (n + 1) * kEntrySize);
    uint64_t word = (offset << 32) | len;
    __atomic_store_n(&entry[0], word, __ATOMIC_RELAXED);
    // Release: the line and the first word are in memory before the check
    // that vouches for them (for a kill, the order of the stores is what counts).
    __atomic_store_n(&entry[1], entryCheck(seal, n, word), __ATOMIC_RELEASE);
  }
  static uint64_t entryCheck(uint64_t seal, uint64_t n, uint64_t word) {
    return mix(seal ^ word ^ (n * 0x9E3779B97F4A7C15ull));
  }
  static uint64_t sealFor(uint64_t key, uint64_t generation) {
    return mix(key ^ (generation * 0xC2B2AE3D27D4EB4Full));
  }
  // A 64-bit finaliser: every input bit changes every output bit.
  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
  }

  // basename.<pid>.spool (sequence > 0: basename.<pid>.<sequence>.spool).
  static std::string spoolName(const std::string& basename, long pid, int sequence = 0);

 private:
  LogSpool(std::string path, int fd, char* map, size_t mapSize, size_t slots, size_t bufferSize);
  spool::Slot* slot(size_t i) const;
  spool::Header* header() const { return reinterpret_cast<spool::Header*>(map_); }

  std::string basename_;
  std::string path_;
  const int fd_;
  char* const map_;
  const size_t mapSize_;
  const size_t slots_;
  const size_t bufferSize_;
  char* const buffers_;
  uint64_t key_ = 0;
  uint64_t nextSequence_ = 1;
};
}  // namespace muon
