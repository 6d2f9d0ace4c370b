// FlushTickets: the bookkeeping behind flush() for a sink whose lines are
// written by a thread of its own. Work is numbered as it is handed over
// (issue()); the writer thread says how far it has got (markDone()); a
// flush takes the newest number and waits until the writer has passed it.
//
//   append():  lock; queue the line; tickets_.issue();
//   flush():   lock; tickets_.waitFor(lock, tickets_.newest(), timeout);
//   writer:    lock; take the queue, target = tickets_.newest(); unlock;
//              write it; lock; tickets_.markDone(target);
//
// What a ticket stands for is the owner's choice: a line (SyslogSink), or a
// flush request that the writer answers with everything it holds.
//
// Thread safety: none of its own. Every call must hold the owner's mutex,
// the one whose lock waitFor() is given.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace muon {

class FlushTickets {
 public:
  // Numbers one more piece of work; returns its ticket.
  uint64_t issue() { return ++issued_; }
  // The ticket of the newest work handed over (0 before any).
  uint64_t newest() const { return issued_; }
  // Whether some issued ticket is not done yet.
  bool pending() const { return done_ < issued_; }

  // Everything up to `ticket` is done; wakes the waiters.
  void markDone(uint64_t ticket) {
    if (ticket > done_) done_ = ticket;
    doneCond_.notify_all();
  }

  // Waits until `ticket` is done or `timeout` has passed; true if done.
  // Releases `lock` while waiting.
  bool waitFor(std::unique_lock<std::mutex>& lock, uint64_t ticket,
               std::chrono::milliseconds timeout) {
    return doneCond_.wait_for(lock, timeout, [&] { return done_ >= ticket; });
  }

 private:
  std::condition_variable doneCond_;
  uint64_t issued_ = 0;
  uint64_t done_ = 0;
};

}  // namespace muon
