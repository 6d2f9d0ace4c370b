// BufferStore: where AsyncLogging's buffers live, and what becomes of each
// on its way to the log file.
//
// AsyncLogging keeps the producer protocol (the reserve word, the lock, the
// queue, the backend, the overflow rule) and numbers its buffers by slot,
// 0 .. slots-1. The store gives a slot its memory and follows the buffer in
// it through its life:
//
//   memoryFor -> activate (the current buffer: producers fill it)
//             -> full, queued (nothing to tell the store)
//             -> write (to the file) or discard (dropped) -> activate ...
//             -> release (the memory goes back)
//
// Two stores, chosen once when AsyncLogging is made:
//   MemoryStore  anonymous memory (below): what is not written is lost with
//                the process; activate, discard and the drop counts are no-ops.
//   LogSpool     a spool file beside the log (LogSpool.h): every buffer
//                outlives the process, and a later recovery writes out what
//                a dead one had not.
// A store may keep an index of the messages at the back of each buffer
// (entrySize() bytes each, SpoolFormat.h); AsyncLogging's producers choose
// their path by entrySize() once, so that the plain path carries none of it.
//
// Internal to muon's logging: users include AsyncLogging.h.
// Thread safety: memoryFor() and release() from any thread, each slot from
// one at a time; the other calls are ordered by AsyncLogging's lock or made
// by its backend (the one writer of the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "muon/base/FileUtil.h"

namespace muon {

class LogFile;

class BufferStore {
 public:
  virtual ~BufferStore() = default;
  BufferStore(const BufferStore&) = delete;
  BufferStore& operator=(const BufferStore&) = delete;

  // Bytes each message's index entry takes at the back of a buffer; 0 when
  // the store keeps no index. Fixed for the store's life.
  size_t entrySize() const { return entrySize_; }
  // Whether the buffers outlive the process (a spool file).
  bool crashSafe() const { return crashSafe_; }
  // The file the buffers are in ("" when they are in memory).
  virtual std::string path() const = 0;

  // Memory for the slot's buffer, resident now, so that the producers who
  // fill it take no page faults; nullptr when none can be had.
  virtual char* memoryFor(size_t slot) = 0;
  // Gives the slot's memory back (the buffer is done with).
  virtual void release(size_t slot, char* memory) = 0;

  // The slot becomes the current buffer, empty. Returns the seal its index
  // entries are made with (0 when there is no index).
  virtual uint64_t activate(size_t slot) = 0;
  // Writes the buffer's whole lines, the `len` bytes at `lines`, in the
  // file's format (LogFile::appendEncoded), to `file`;
  // after it, however the write went, nothing in the buffer is left to write.
  virtual WriteResult write(size_t slot, const char* lines, size_t len, LogFile* file) = 0;
  // The buffer's lines were dropped (and counted with countDropped()):
  // nothing in it is left to write.
  virtual void discard(size_t slot) = 0;

  // Lines lost to the overflow rule or for want of memory, counted before
  // their buffer is discarded.
  virtual void countDropped(uint64_t buffers, uint64_t messages) = 0;
  // Writes `report`, the line that says `buffers` and `messages` were
  // dropped, to `file`; they count as reported after it.
  virtual WriteResult writeReport(const char* report, size_t len, uint64_t buffers,
                                  uint64_t messages, LogFile* file) = 0;

 protected:
  BufferStore(size_t entrySize, bool crashSafe) : entrySize_(entrySize), crashSafe_(crashSafe) {}

 private:
  const size_t entrySize_;
  const bool crashSafe_;
};

// The default store: each buffer mapped anonymous and private, given back
// with munmap (a burst's memory returns to the system at once, where free()
// would keep it in a malloc arena).
class MemoryStore : public BufferStore {
 public:
  explicit MemoryStore(size_t bufferSize) : BufferStore(0, false), bufferSize_(bufferSize) {}

  std::string path() const override { return std::string(); }
  char* memoryFor(size_t slot) override;
  void release(size_t slot, char* memory) override;
  // Nothing outlives the process, so a buffer's and a drop's states need no record.
  uint64_t activate(size_t) override { return 0; }
  WriteResult write(size_t slot, const char* lines, size_t len, LogFile* file) override;
  void discard(size_t) override {}
  void countDropped(uint64_t, uint64_t) override {}
  WriteResult writeReport(const char* report, size_t len, uint64_t buffers, uint64_t messages,
                          LogFile* file) override;

 private:
  const size_t bufferSize_;
};

}  // namespace muon
