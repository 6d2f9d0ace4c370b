// LogSpool: the file a crash-safe AsyncLogging keeps its buffers in.
//
// The spool is a file in the log directory, basename.<pid>.spool, mapped
// MAP_SHARED. A line copied into a buffer is then in the kernel's page cache,
// which outlives the process: after kill -9, an OOM kill or abort() the next
// process (or muon-recover) finds the spool, sees that nobody holds its lock,
// and writes out what the dead process had not (SpoolRecovery.h).
//
// The format (layout, slot states, the index, file names) is SpoolFormat.h.
// A producer copies its line into the buffer, then records it in the
// buffer's index (spool::record); recovery takes a message only when its
// entry's check is right: a line whose writer was killed before the last
// store is absent, never cut short; stale entries of an earlier generation,
// and data bytes however crafted (they do not know the key), fail the
// check. The backend writes the lines region only.
//
// A buffer being written is kWriting at the recorded position: recovery
// first cuts the file back to that size, so the buffer is written exactly
// once whether or not the write had happened.
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
// LogSpool is AsyncLogging's BufferStore in crash-safe mode: each call of
// that interface is the spool's record of the buffer's state.
//
// Thread safety: create(), open() and the destructor from one thread; the
// BufferStore calls as BufferStore.h says (activate() and write() of one
// slot, discard() and countDropped() are ordered by AsyncLogging's lock or
// made by its backend; writeReport() by the backend); producers call
// spool::record() each on its own reservation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "muon/base/internal/BufferStore.h"
#include "muon/base/internal/SpoolFormat.h"
#include "muon/base/SpoolRecovery.h"

namespace muon {

class LogSpool : public BufferStore {
 public:
  // Creates and locks the spool of `basename` (its name: spool::fileName()) with
  // `slots` buffers of `bufferSize` bytes, under a temporary name that no
  // recovery looks at; publish() gives it its real name. nullptr and a
  // message in *error when it cannot.
  static std::unique_ptr<LogSpool> create(const std::string& basename, size_t slots,
                                          size_t bufferSize, std::string* error);

  // What a crash-safe AsyncLogging starts with: its spool made (create()),
  // then what dead processes of `basename` left in theirs written to
  // `output` (recoverDeadSpools(), so their lines come before any of the new
  // spool's), then the new spool published. The recovery is done whether or
  // not a spool could be made.
  struct Opened {
    std::unique_ptr<LogSpool> spool;  // nullptr: none could be made or published
    std::string error;                // why there is no spool
    std::vector<RecoveryReport> recovered;  // one per dead spool
  };
  static Opened open(const std::string& basename, size_t slots, size_t bufferSize,
                     LogFile* output);

  // Unmaps; removes the spool file when nothing in it is left to recover
  // or report (a clean stop), keeps it otherwise.
  ~LogSpool() override;

  // Renames the spool to spool::fileName(): from here on a recovery finds it (and
  // leaves it alone while this process holds the lock). Never replaces a
  // file: if another spool has the name, a sequence number is added.
  bool publish(std::string* error);
  std::string path() const override { return path_; }

  char* data(size_t slot) const { return buffers_ + slot * bufferSize_; }

  // BufferStore. memoryFor() makes the slot's pages resident and writable
  // (best effort); release() gives them back (a burst is over), their disk
  // blocks stay.
  char* memoryFor(size_t slot) override;
  void release(size_t slot, char* memory) override;
  // The slot becomes a fresh current buffer: a new generation, the next
  // place in the order, state kActive. Returns the seal record() needs.
  uint64_t activate(size_t slot) override;
  // kWriting at the file's next position, the write, then kFree.
  WriteResult write(size_t slot, const char* lines, size_t len, LogFile* file) override;
  void discard(size_t slot) override { spool::markFree(slotHeader(slot)); }
  // Counted before their buffer is marked free.
  void countDropped(uint64_t buffers, uint64_t messages) override;
  // The report kWriting at the file's next position, the write, then the
  // counts reported.
  WriteResult writeReport(const char* report, size_t len, uint64_t buffers, uint64_t messages,
                          LogFile* file) override;

 private:
  LogSpool(std::string path, int fd, char* map, size_t mapSize, size_t slots, size_t bufferSize);
  spool::Slot* slotHeader(size_t i) const { return spool::slotAt(map_, i); }
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
