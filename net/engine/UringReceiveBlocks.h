// UringReceiveBlocks: the memory the io_uring engine receives into, one set
// per loop. Internal header.
//
// A receive request names no memory of its own: it selects a buffer from
// this loop's ring of provided buffers when its data arrives. So a
// connection waiting for data holds no receive memory, and the blocks in use
// are few and reused while warm in the cache, as the readiness engines read
// every connection of a loop into one buffer.
//
// A block travels as the storage of a Buffer. A completed receive's block is
// swapped into the connection's input buffer when that is empty (no copy);
// send(Buffer*) may take it on into a send request; once the Buffer holding
// it is empty again, recycle() takes it back to a free list, newest first.
// Each completion refills the ring at once from that list, so the ring keeps
// its size; a receive that finds it empty fails with ENOBUFS, is re-armed by
// its connection, and the ring grows by one block (up to kMaxBlocks).
//
// Loop thread only. Destroy it after the ring has been torn down (no request
// may be left that could write into a block).
#pragma once

#include <liburing.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "muon/net/Buffer.h"

namespace muon {
namespace net {

class UringReceiveBlocks {
 public:
  static constexpr size_t kBlockBytes = 16 * 1024;  // what one receive may take
  static constexpr unsigned kInitialBlocks = 16;
  static constexpr unsigned kMaxBlocks = 1024;  // the ring's entries (a power of two)

  // Registers the ring with `ring` (buffer group 0); nullptr, with *reason
  // saying why, where the kernel has no provided-buffer rings (before 5.19).
  static std::unique_ptr<UringReceiveBlocks> create(struct io_uring* ring, std::string* reason);
  ~UringReceiveBlocks();
  UringReceiveBlocks(const UringReceiveBlocks&) = delete;
  UringReceiveBlocks& operator=(const UringReceiveBlocks&) = delete;

  // Makes `sqe` a receive from `fd` into a block of the ring.
  void prepareReceive(struct io_uring_sqe* sqe, int fd) const;

  // A receive completed with `res` (> 0: bytes) and `cqeFlags`. Its bytes
  // are appended to *input: the block itself is swapped in when *input is
  // empty, else the bytes are copied; a null input drops them. Either way
  // the ring is refilled. Without IORING_CQE_F_BUFFER in cqeFlags the
  // kernel took no block and there is nothing to do.
  void take(int res, uint32_t cqeFlags, Buffer* input);
  // A receive failed with ENOBUFS: the ring gets one more block.
  void grow();
  // An empty Buffer holding a block gives it to the free list (and keeps a
  // few bytes of storage); any other Buffer is left alone.
  void recycle(Buffer* buf);
  // Gives an empty *buf a block from the free list if it has less than
  // `len` bytes of room and len fits in a block (a send's copy).
  void lend(Buffer* buf, size_t len);

  unsigned blocksInRing() const { return static_cast<unsigned>(slots_.size()); }
  size_t freeBlocks() const { return free_.size(); }

 private:
  explicit UringReceiveBlocks(struct io_uring_buf_ring* bufRing);
  static bool isBlock(const Buffer& buf) {
    return buf.readableBytes() == 0 && buf.prependableBytes() == Buffer::kCheapPrepend &&
           buf.writableBytes() == kBlockBytes;
  }
  Buffer newBlock();
  void provide(uint16_t id);

  struct io_uring_buf_ring* const bufRing_;  // mmap'ed, shared with the kernel
  std::vector<Buffer> slots_;  // by buffer id: the block the ring holds under that id
  std::vector<Buffer> free_;   // recycled blocks, the most recent last
  // Small storages a block's place was taken from (by take()), left by
  // recycle() in the Buffer it takes a block from: no allocation per message.
  std::vector<Buffer> husks_;
};

}  // namespace net
}  // namespace muon
