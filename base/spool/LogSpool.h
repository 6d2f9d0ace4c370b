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
// Thread safety: create() and the destructor from one thread; activate(),
// markWriting() and markFree() for one slot, and countDropped(), are
// ordered by AsyncLogging's lock or owned by its backend; beginReport() and
// endReport() by the backend (one writer of the file); producers call
// spool::record() each on its own reservation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "muon/base/SpoolFormat.h"

namespace muon {

class LogSpool {
 public:
  // Creates and locks the spool of `basename` (its name: spool::fileName()) with
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

  // Renames the spool to spool::fileName(): from here on a recovery finds it (and
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
  void markFree(size_t i) { spool::markFree(slot(i)); }

  // Counts messages dropped (before their buffer is marked free).
  void countDropped(uint64_t buffers, uint64_t messages);
  // The backend is about to write a drop report at `pos`; it is written.
  void beginReport(const FilePosition& pos) { spool::beginReport(header(), pos); }
  void endReport(uint64_t buffers, uint64_t messages) {
    spool::endReport(header(), buffers, messages);
  }

 private:
  LogSpool(std::string path, int fd, char* map, size_t mapSize, size_t slots, size_t bufferSize);
  spool::Slot* slot(size_t i) const { return spool::slotAt(map_, i); }
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
