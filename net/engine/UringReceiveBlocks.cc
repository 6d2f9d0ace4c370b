#include "muon/net/internal/UringReceiveBlocks.h"

#include <sys/mman.h>

#include <cassert>
#include <cstring>

namespace muon {
namespace net {

namespace {
constexpr uint16_t kGroup = 0;  // the only buffer group of the ring
constexpr int kMask = static_cast<int>(UringReceiveBlocks::kMaxBlocks - 1);
static_assert((UringReceiveBlocks::kMaxBlocks & (UringReceiveBlocks::kMaxBlocks - 1)) == 0,
              "a buffer ring's size is a power of two");
constexpr size_t kRingBytes = UringReceiveBlocks::kMaxBlocks * sizeof(struct io_uring_buf);
}  // namespace

std::unique_ptr<UringReceiveBlocks> UringReceiveBlocks::create(struct io_uring* ring,
                                                               std::string* reason) {
  // The ring's entries live in page-aligned memory the kernel reads.
  void* mem = ::mmap(nullptr, kRingBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    *reason = std::string("mmap of the receive ring: ") + std::strerror(errno);
    return nullptr;
  }
  auto* bufRing = static_cast<struct io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(bufRing);
  struct io_uring_buf_reg reg {};
  reg.ring_addr = reinterpret_cast<uintptr_t>(mem);
  reg.ring_entries = kMaxBlocks;
  reg.bgid = kGroup;
  const int rc = io_uring_register_buf_ring(ring, &reg, 0);
  if (rc < 0) {
    ::munmap(mem, kRingBytes);
    *reason = std::string("io_uring_register_buf_ring: ") + std::strerror(-rc);
    return nullptr;
  }
  std::unique_ptr<UringReceiveBlocks> blocks(new UringReceiveBlocks(bufRing));
  for (unsigned i = 0; i < kInitialBlocks; ++i) blocks->grow();
  return blocks;
}

UringReceiveBlocks::UringReceiveBlocks(struct io_uring_buf_ring* bufRing) : bufRing_(bufRing) {
  slots_.reserve(kMaxBlocks);
}

UringReceiveBlocks::~UringReceiveBlocks() {
  // The ring is gone (see the header), so the kernel holds no reference.
  ::munmap(bufRing_, kRingBytes);
}

void UringReceiveBlocks::prepareReceive(struct io_uring_sqe* sqe, int fd) const {
  io_uring_prep_recv(sqe, fd, nullptr, kBlockBytes, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = kGroup;
}

Buffer UringReceiveBlocks::newBlock() {
  if (free_.empty()) return Buffer(kBlockBytes);
  Buffer block = std::move(free_.back());
  free_.pop_back();
  return block;
}

// Hands slots_[id]'s block (empty) to the kernel, at the ring's tail.
void UringReceiveBlocks::provide(uint16_t id) {
  Buffer& block = slots_[id];
  assert(isBlock(block));
  io_uring_buf_ring_add(bufRing_, block.beginWrite(), static_cast<unsigned>(kBlockBytes), id,
                        kMask, 0);
  io_uring_buf_ring_advance(bufRing_, 1);
}

void UringReceiveBlocks::take(int res, uint32_t cqeFlags, Buffer* input) {
  if (!(cqeFlags & IORING_CQE_F_BUFFER)) return;
  const auto id = static_cast<uint16_t>(cqeFlags >> IORING_CQE_BUFFER_SHIFT);
  assert(id < slots_.size());
  Buffer& slot = slots_[id];
  if (res > 0 && input != nullptr) {
    slot.hasWritten(static_cast<size_t>(res));
    if (input->readableBytes() == 0) {
      input->swap(slot);  // the slot now holds the input's old storage
      slot.retrieveAll();
      if (!isBlock(slot)) {
        // Kept for recycle(), which leaves a husk where it takes a block.
        if (husks_.size() < slots_.size()) husks_.push_back(std::move(slot));
        slot = newBlock();
      }
    } else {
      input->append(slot.peek(), slot.readableBytes());
    }
  }
  slot.retrieveAll();
  provide(id);
}

void UringReceiveBlocks::grow() {
  if (slots_.size() >= kMaxBlocks) return;
  slots_.push_back(newBlock());
  provide(static_cast<uint16_t>(slots_.size() - 1));
}

void UringReceiveBlocks::recycle(Buffer* buf) {
  if (buf->readableBytes() != 0) return;
  buf->retrieveAll();
  if (!isBlock(*buf)) return;
  Buffer husk = husks_.empty() ? Buffer(0) : std::move(husks_.back());
  if (!husks_.empty()) husks_.pop_back();
  husk.swap(*buf);  // husk now holds the block
  // Bounded: blocks beyond what the ring holds go back to the heap.
  if (free_.size() < slots_.size()) free_.push_back(std::move(husk));
}

void UringReceiveBlocks::lend(Buffer* buf, size_t len) {
  if (buf->readableBytes() != 0 || buf->writableBytes() >= len || len > kBlockBytes) return;
  newBlock().swap(*buf);
}

}  // namespace net
}  // namespace muon
