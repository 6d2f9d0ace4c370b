// LogSpool: the file a crash-safe AsyncLogging keeps its buffers in.
//
// The spool is a file in the log directory, basename.<pid>.spool, mapped
// MAP_SHARED. A line copied into a buffer is then in the kernel's page cache,
// which outlives the process: after kill -9, an OOM kill or abort() the next
// process (or muon-recover) finds the spool, sees that nobody holds its lock,
// and writes out what the dead process had not (SpoolRecovery.h).
//
// Layout (every part page-aligned; docs/logging.md has the picture):
//   page 0              SpoolHeader: magic, version, sizes, a random key, pid
//   pages 1..slots      one SlotHeader per buffer: state, generation, order,
//                       and while it is being written, the log file's
//                       identity and size before the write
//   then slots x bufferSize of buffers.
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
// Thread safety: create() and the destructor from one thread; activate(),
// markWriting() and markFree() for one slot are ordered by AsyncLogging's
// lock or owned by its backend; record() is called by producers, each on
// its own reservation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "muon/base/FileUtil.h"

namespace muon {

// The on-disk layout, shared by LogSpool and the recovery reader.
namespace spool {

constexpr char kMagic[8] = {'M', 'U', 'O', 'N', 'S', 'P', 'L', '1'};
constexpr uint32_t kVersion = 1;
constexpr size_t kPageSize = 4096;
constexpr size_t kMaxSlots = 1024;  // more is taken as a corrupt header

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t slotCount;
  uint64_t bufferSize;
  uint64_t key;
  uint64_t pid;
};

struct Slot {
  uint64_t state;  // LogSpool::SlotState; stored last when it changes
  uint64_t generation;
  uint64_t sequence;  // order in which buffers became current, from 1
  uint64_t device;    // kWriting: the log file and its size before the write
  uint64_t inode;
  uint64_t size;
  char path[kPageSize - 6 * sizeof(uint64_t)];
};
static_assert(sizeof(Slot) == kPageSize, "one slot header per page");

// Offset of the first buffer.
inline size_t buffersOffset(size_t slots) { return kPageSize * (1 + slots); }

// Marks a slot kWriting at `pos`: the fields first, the state last.
void markWriting(Slot* slot, const FilePosition& pos);

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
  // Unmaps; removes the spool file when no slot holds anything to recover
  // (a clean stop), keeps it otherwise.
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
