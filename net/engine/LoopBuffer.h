// LoopBuffer, BufferLoan: a loop thread's shared buffer, lent to a
// connection's empty Buffer for one read and its callback. Internal header.
//
// A connection with nothing buffered reads (or decrypts) into the loop's
// buffer and hands it to its callback as its own; what the callback leaves
// is then copied into the connection's own storage, and the loop's goes
// back empty. So the bytes land in memory every connection of the loop
// reuses, warm in the cache, and a connection whose callback takes whole
// messages holds no big buffer between them. Each user (the readiness
// engines' receive, TLS's plaintext) has its own thread_local LoopBuffer:
// both may be lent at once. Loop thread only.
#pragma once

#include "muon/net/Buffer.h"

namespace muon {
namespace net {

struct LoopBuffer {
  Buffer buffer{64 * 1024};
  bool lent = false;  // inside a BufferLoan
};

class BufferLoan {
 public:
  // Lends loopBuffer's storage to *target if *target is empty and the loop
  // buffer is not lent already (a nested read); else does nothing.
  BufferLoan(Buffer* target, LoopBuffer* loopBuffer)
      : target_(target),
        loopBuffer_(target->readableBytes() == 0 && !loopBuffer->lent ? loopBuffer : nullptr) {
    if (loopBuffer_ != nullptr) {
      target_->swap(loopBuffer_->buffer);
      loopBuffer_->lent = true;
    }
  }
  // Gives it back, keeping what is left in the target's own storage.
  ~BufferLoan() {
    if (loopBuffer_ == nullptr) return;
    Buffer& own = loopBuffer_->buffer;  // the target's, while lent
    if (target_->readableBytes() > 0) {
      own.append(target_->peek(), target_->readableBytes());
      target_->retrieveAll();
    }
    target_->swap(own);
    loopBuffer_->lent = false;
  }
  BufferLoan(const BufferLoan&) = delete;
  BufferLoan& operator=(const BufferLoan&) = delete;

 private:
  Buffer* const target_;
  LoopBuffer* const loopBuffer_;  // null: nothing lent
};

}  // namespace net
}  // namespace muon
