// UringPoller: the io_uring engine behind EventLoop. Internal header.
//
// Two kinds of request share one ring, and every system call of the loop is
// one io_uring_enter per iteration (submit what was queued, wait for one
// completion or the timeout):
//  * Readiness, for Channels (timerfd, wakeup eventfd, Acceptor, Connector,
//    and sockets of loops not using completions): a one-shot POLL_ADD per
//    channel, re-armed after it fires. Re-arming polls the file again, so a
//    channel sees level-triggered events exactly as on epoll.
//  * Completions, for connections (each gets a UringTransport from
//    newTransport()): Operation objects (a receive into, or a send from, a
//    pinned buffer of the connection). The poller owns each Operation from
//    prepare() until its last completion (no IORING_CQE_F_MORE), then
//    deletes it; an Operation that must keep its owner alive holds a
//    shared_ptr to it. See docs/net.md, "The io_uring engine".
//
// Everything is for the owner loop's thread (the ring is set up
// SINGLE_ISSUER where the kernel has it).
#pragma once

#include <liburing.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "muon/net/internal/Poller.h"
#include "muon/net/internal/UringReceiveBlocks.h"

namespace muon {
namespace net {

class UringPoller : public Poller {
 public:
  // A request in flight.
  class Operation {
   public:
    virtual ~Operation() = default;
    // Called in the loop thread for each completion of the request; the
    // last one has no IORING_CQE_F_MORE in `flags`, and the poller deletes
    // the operation right after it returns. Not called for requests still
    // in flight when the poller is destroyed (they are deleted silently).
    virtual void complete(int res, uint32_t flags) = 0;

   private:
    friend class UringPoller;
    static constexpr size_t kNotInFlight = ~size_t{0};
    size_t inFlightIndex_ = kNotInFlight;  // its place in the poller's inFlight_
  };

  // nullptr, with *reason saying why, when this kernel or process cannot
  // run the engine (setup refused, a needed opcode or feature missing).
  static std::unique_ptr<UringPoller> create(EventLoop* loop, std::string* reason);
  ~UringPoller() override;

  Timestamp poll(int timeoutMs, ChannelList* activeChannels) override;
  int updateChannel(Channel* channel) override;
  void removeChannel(Channel* channel) override;
  std::unique_ptr<Transport> newTransport(const Transport::Parts& parts) override;
  // Runs the operations' callbacks for the completions the last poll()
  // took, in order. Callbacks may prepare and cancel requests.
  size_t dispatchCompletions() override;

  // A submission entry for `op`, owned by the poller from now on; it is
  // submitted with the next poll(). Never null (a full queue is submitted
  // first).
  struct io_uring_sqe* prepare(Operation* op);
  // Asks the kernel to cancel `op` (in flight); its last completion still
  // arrives, with -ECANCELED or its own result.
  void cancel(Operation* op);
  // Runs f once the completions being dispatched have all been handled
  // (in this dispatchCompletions call), so an owner that got several of
  // them acts once. Only from an Operation's complete().
  void afterCompletions(std::function<void()> f) { afterCompletions_.push_back(std::move(f)); }
  // Where receive requests land (see UringReceiveBlocks.h).
  UringReceiveBlocks* receiveBlocks() { return receiveBlocks_.get(); }
  // Whether `op` is still in flight (for assertions and tests).
  bool inFlight(const Operation* op) const {
    return op->inFlightIndex_ < inFlight_.size() && inFlight_[op->inFlightIndex_] == op;
  }

 private:
  UringPoller(EventLoop* loop);
  bool setUp(std::string* reason);
  struct io_uring_sqe* getSqe();
  void arm(int fd);
  void syncArming();
  void reap(ChannelList* activeChannels);
  void forget(Operation* op);

  // The readiness state of one fd (slots_ is indexed by fd).
  struct Slot {
    Channel* channel = nullptr;
    uint32_t armedGeneration = 0;  // 0: no poll in flight for this channel
    uint32_t armedMask = 0;
    bool dirty = false;            // in dirty_: arming to be brought up to date
  };

  struct Completion {
    Operation* op;
    int res;
    uint32_t flags;
  };

  struct io_uring ring_;
  std::vector<Completion> completions_;  // taken by poll(), not yet dispatched
  std::vector<std::function<void()>> afterCompletions_;
  bool ringReady_;
  std::vector<Slot> slots_;
  std::vector<int> dirty_;
  uint32_t nextGeneration_;
  // The operations in flight, owned, in no order: each knows its index, so
  // adding and removing one is O(1) and touches no other memory than the
  // last one's (a hash set of thousands of pointers missed the cache).
  std::vector<Operation*> inFlight_;
  std::unique_ptr<UringReceiveBlocks> receiveBlocks_;  // after the ring is set up
};

}  // namespace net
}  // namespace muon
