#include "muon/net/internal/UringPoller.h"

#include <poll.h>

#include <cassert>
#include <cerrno>
#include <cstring>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/internal/UringTransport.h"

namespace muon {
namespace net {

namespace {

// user_data of a request: 0 for those whose completion is ignored (poll
// removals, cancels); an Operation* (8-aligned, bit 0 clear); or a channel's
// poll, with bit 0 set: (generation << 32) | (fd << 1) | 1. A completion of a
// poll whose generation is no longer its slot's is stale and dropped, so a
// removed channel is never touched, even if its fd number is reused.
constexpr uint64_t kIgnored = 0;

uint64_t pollData(int fd, uint32_t generation) {
  return (uint64_t{generation} << 32) | (static_cast<uint64_t>(fd) << 1) | 1;
}

// Submission and completion queues: one iteration's worth of requests. The
// completion queue is larger: with thousands of connections one iteration
// may complete a receive and a send on each (overflow is kept by the kernel,
// IORING_FEAT_NODROP, but costs a slower path).
constexpr unsigned kSqEntries = 1024;
constexpr unsigned kCqEntries = 16384;

}  // namespace

std::unique_ptr<UringPoller> UringPoller::create(EventLoop* loop, std::string* reason) {
  std::unique_ptr<UringPoller> poller(new UringPoller(loop));
  if (!poller->setUp(reason)) return nullptr;
  return poller;
}

UringPoller::UringPoller(EventLoop* loop)
    : Poller(loop), ring_{}, ringReady_(false), nextGeneration_(1) {}

std::unique_ptr<Transport> UringPoller::newTransport(const Transport::Parts& parts) {
  return std::make_unique<UringTransport>(parts, this);
}

bool UringPoller::setUp(std::string* reason) {
  struct io_uring_params params {};
  params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
                 IORING_SETUP_DEFER_TASKRUN;
  params.cq_entries = kCqEntries;
  int rc = io_uring_queue_init_params(kSqEntries, &ring_, &params);
  if (rc == -EINVAL) {
    // A kernel before 6.1 does not know the task-run flags; the rest works
    // without them.
    params = io_uring_params{};
    params.flags = IORING_SETUP_CQSIZE;
    params.cq_entries = kCqEntries;
    rc = io_uring_queue_init_params(kSqEntries, &ring_, &params);
  }
  if (rc < 0) {
    *reason = std::string("io_uring_setup: ") + std::strerror(-rc);
    return false;
  }
  ringReady_ = true;
  // EXT_ARG: a wait with a timeout is one system call; NODROP: no
  // completion is lost when the completion queue overflows.
  if (!(params.features & IORING_FEAT_EXT_ARG) || !(params.features & IORING_FEAT_NODROP)) {
    *reason = "the kernel lacks IORING_FEAT_EXT_ARG or IORING_FEAT_NODROP";
    return false;
  }
  struct io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
  if (probe == nullptr) {
    *reason = "the kernel cannot be probed for opcodes";
    return false;
  }
  bool opcodes = true;
  for (int op : {IORING_OP_POLL_ADD, IORING_OP_POLL_REMOVE, IORING_OP_RECV, IORING_OP_SEND,
                 IORING_OP_ASYNC_CANCEL}) {
    if (!io_uring_opcode_supported(probe, op)) opcodes = false;
  }
  io_uring_free_probe(probe);
  if (!opcodes) {
    *reason = "the kernel lacks poll, recv, send or cancel opcodes";
    return false;
  }
  receiveBlocks_ = UringReceiveBlocks::create(&ring_, reason);
  return receiveBlocks_ != nullptr;
}

UringPoller::~UringPoller() {
  // Tearing the ring down cancels whatever is in flight; the operations
  // are then ours to delete, without their callbacks. Deleting one may
  // free its owner (a TcpConnection it kept alive), so the list is moved out
  // first.
  if (ringReady_) io_uring_queue_exit(&ring_);
  receiveBlocks_.reset();  // no request can write into a block now
  std::vector<Operation*> operations;
  operations.swap(inFlight_);
  for (Operation* op : operations) delete op;
}

struct io_uring_sqe* UringPoller::getSqe() {
  struct io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    // The queue is full: hand it to the kernel now.
    int rc = io_uring_submit(&ring_);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      errno = -rc;
      LOG_SYSFATAL << "UringPoller: io_uring_submit";
    }
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

struct io_uring_sqe* UringPoller::prepare(Operation* op) {
  assertInLoopThread();
  struct io_uring_sqe* sqe = getSqe();
  op->inFlightIndex_ = inFlight_.size();
  inFlight_.push_back(op);
  // The caller fills in the request; liburing's prep helpers leave
  // user_data alone.
  io_uring_sqe_set_data(sqe, op);
  return sqe;
}

void UringPoller::cancel(Operation* op) {
  assertInLoopThread();
  assert(inFlight(op));
  struct io_uring_sqe* sqe = getSqe();
  io_uring_prep_cancel(sqe, op, 0);
  io_uring_sqe_set_data64(sqe, kIgnored);
}

int UringPoller::updateChannel(Channel* channel) {
  assertInLoopThread();
  const int fd = channel->fd();
  if (channel->index() < 0) {
    assert(channels_.find(fd) == channels_.end());
    if (int err = refuseUnwaitable(fd)) return err;
    channels_[fd] = channel;
    channel->setIndex(1);
    if (slots_.size() <= static_cast<size_t>(fd)) slots_.resize(static_cast<size_t>(fd) * 2 + 16);
    Slot& slot = slots_[static_cast<size_t>(fd)];
    assert(slot.channel == nullptr && slot.armedGeneration == 0);
    slot.channel = channel;
  } else {
    assert(hasChannel(channel));
  }
  arm(fd);
  return 0;
}

void UringPoller::removeChannel(Channel* channel) {
  assertInLoopThread();
  assert(hasChannel(channel));
  assert(channel->isNoneEvent());
  const int fd = channel->fd();
  channels_.erase(fd);
  channel->setIndex(-1);
  Slot& slot = slots_[static_cast<size_t>(fd)];
  // The poll goes now, not at the next sync: the fd may be closed and its
  // number reused before then, and a poll holds the old file open.
  if (slot.armedGeneration != 0) {
    struct io_uring_sqe* sqe = getSqe();
    io_uring_prep_poll_remove(sqe, pollData(fd, slot.armedGeneration));
    io_uring_sqe_set_data64(sqe, kIgnored);
  }
  slot.channel = nullptr;
  slot.armedGeneration = 0;
  slot.armedMask = 0;
  // Left in dirty_ if it is there: syncArming skips empty slots.
}

void UringPoller::arm(int fd) {
  Slot& slot = slots_[static_cast<size_t>(fd)];
  if (!slot.dirty) {
    slot.dirty = true;
    dirty_.push_back(fd);
  }
}

// Brings each dirty slot's poll in line with its channel's interest: one
// POLL_REMOVE for a poll asking the wrong question, one POLL_ADD if there is
// interest and no poll. Batched into the next enter.
void UringPoller::syncArming() {
  for (int fd : dirty_) {
    Slot& slot = slots_[static_cast<size_t>(fd)];
    slot.dirty = false;
    if (slot.channel == nullptr) continue;
    const uint32_t want = static_cast<uint32_t>(slot.channel->events());
    if (slot.armedGeneration != 0 && slot.armedMask != want) {
      struct io_uring_sqe* sqe = getSqe();
      io_uring_prep_poll_remove(sqe, pollData(fd, slot.armedGeneration));
      io_uring_sqe_set_data64(sqe, kIgnored);
      slot.armedGeneration = 0;
    }
    if (want != 0 && slot.armedGeneration == 0) {
      uint32_t generation = nextGeneration_++;
      if (generation == 0) generation = nextGeneration_++;  // 0 means "not armed"
      struct io_uring_sqe* sqe = getSqe();
      io_uring_prep_poll_add(sqe, fd, want);
      io_uring_sqe_set_data64(sqe, pollData(fd, generation));
      slot.armedGeneration = generation;
      slot.armedMask = want;
    }
  }
  dirty_.clear();
}

Timestamp UringPoller::poll(int timeoutMs, ChannelList* activeChannels) {
  syncArming();
  int rc;
  if (timeoutMs == 0) {
    rc = io_uring_submit_and_get_events(&ring_);
  } else {
    struct __kernel_timespec ts {};
    ts.tv_sec = timeoutMs / 1000;
    ts.tv_nsec = static_cast<long long>(timeoutMs % 1000) * 1000 * 1000;
    struct io_uring_cqe* cqe = nullptr;
    rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, timeoutMs < 0 ? nullptr : &ts, nullptr);
  }
  Timestamp now(Timestamp::now());
  if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
    errno = -rc;
    LOG_SYSERR << "UringPoller::poll()";
  }
  reap(activeChannels);
  return now;
}

void UringPoller::reap(ChannelList* activeChannels) {
  // Channels' events go to activeChannels; operations' completions wait in
  // completions_ for dispatchCompletions (EventLoop calls it while handling
  // events, after the channels).
  for (;;) {
    struct io_uring_cqe* cqe = nullptr;
    if (io_uring_peek_cqe(&ring_, &cqe) != 0 || cqe == nullptr) break;
    const uint64_t data = io_uring_cqe_get_data64(cqe);
    const int res = cqe->res;
    const uint32_t flags = cqe->flags;
    io_uring_cqe_seen(&ring_, cqe);
    if (data == kIgnored) continue;
    if (data & 1) {
      const int fd = static_cast<int>((data & 0xffffffffu) >> 1);
      const uint32_t generation = static_cast<uint32_t>(data >> 32);
      if (static_cast<size_t>(fd) >= slots_.size()) continue;
      Slot& slot = slots_[static_cast<size_t>(fd)];
      if (slot.armedGeneration != generation || slot.channel == nullptr) continue;  // stale
      slot.armedGeneration = 0;  // one-shot: it is re-armed at the next sync
      arm(fd);
      if (res == -ECANCELED) continue;
      slot.channel->setRevents(res >= 0 ? res : (res == -EBADF ? POLLNVAL : POLLERR));
      activeChannels->push_back(slot.channel);
    } else {
      completions_.push_back(Completion{reinterpret_cast<Operation*>(data), res, flags});
    }
  }
}

void UringPoller::forget(Operation* op) {
  Operation* last = inFlight_.back();
  inFlight_[op->inFlightIndex_] = last;
  last->inFlightIndex_ = op->inFlightIndex_;
  inFlight_.pop_back();
  op->inFlightIndex_ = Operation::kNotInFlight;
}

size_t UringPoller::dispatchCompletions() {
  assertInLoopThread();
  // Index, not iterator: a callback may not add completions (only poll()
  // does), but the vector is cleared only after all have run.
  for (size_t i = 0; i < completions_.size(); ++i) {
    const Completion c = completions_[i];
    assert(inFlight(c.op));
    c.op->complete(c.res, c.flags);
    if (!(c.flags & IORING_CQE_F_MORE)) {
      forget(c.op);
      delete c.op;
    }
  }
  const size_t n = completions_.size();
  completions_.clear();
  for (size_t i = 0; i < afterCompletions_.size(); ++i) afterCompletions_[i]();
  afterCompletions_.clear();
  return n;
}

}  // namespace net
}  // namespace muon
