// TcpConnection on the io_uring engine: the socket driven by completions.
//
// Ownership: each request in flight is an Operation the poller owns until
// its last completion; the operation holds a TcpConnectionPtr, so the
// connection, its fd and the pinned bytes of a send outlive every request
// on them. recvOperation_ / sendOperation_ point at the requests in flight
// and are cleared by their last completions. Closing cancels them; their
// last completions then only drop the reference.
#include "muon/net/TcpConnection.h"

#include <errno.h>
#include <sys/socket.h>

#include <algorithm>
#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"

#ifdef MUON_HAVE_URING
#include "muon/net/UringPoller.h"

namespace muon {
namespace net {

namespace {
// A send request carries at most this much (copied into sending_, so that
// send() may keep appending to the output buffer meanwhile).
constexpr size_t kMaxSendBytes = 1024 * 1024;
}  // namespace

class TcpConnection::RecvOperation : public UringPoller::Operation {
 public:
  explicit RecvOperation(TcpConnectionPtr conn) : conn_(std::move(conn)) {
    conn_->engineReferences_.fetch_add(1);
  }
  // Also reached without a last completion, when the poller is destroyed
  // with the request in flight.
  ~RecvOperation() override {
    if (conn_->recvOperation_ == this) conn_->recvOperation_ = nullptr;
    conn_->engineReferences_.fetch_sub(1);
  }
  void complete(int res, uint32_t flags) override {
    conn_->received(res, flags, !(flags & IORING_CQE_F_MORE));
  }
  bool cancelled = false;

 private:
  const TcpConnectionPtr conn_;
};

class TcpConnection::SendOperation : public UringPoller::Operation {
 public:
  explicit SendOperation(TcpConnectionPtr conn) : conn_(std::move(conn)) {
    conn_->engineReferences_.fetch_add(1);
  }
  ~SendOperation() override {
    if (conn_->sendOperation_ == this) conn_->sendOperation_ = nullptr;
    conn_->engineReferences_.fetch_sub(1);
  }
  void complete(int res, uint32_t) override { conn_->sent(res); }
  bool cancelled = false;

 private:
  const TcpConnectionPtr conn_;
};

// One receive at a time, into a block of the loop's ring chosen by the
// kernel when the data arrives (UringReceiveBlocks), re-armed once its bytes
// have been delivered: so reading stops at once when the application stops
// it (stopRead, the input limit, the high-water-mark policy), as on epoll,
// and each delivery is at most one read. A multishot receive would keep
// posting data until its cancellation landed.
void TcpConnection::startReceiving() {
  // One in flight already (perhaps being cancelled: its completion re-arms
  // if reading is still wanted).
  if (recvOperation_ != nullptr || deliveryQueued_) return;
  recvOperation_ = new RecvOperation(shared_from_this());
  uring_->receiveBlocks()->prepareReceive(uring_->prepare(recvOperation_), channel_->fd());
}

void TcpConnection::stopReceiving() {
  if (recvOperation_ != nullptr && !recvOperation_->cancelled) {
    recvOperation_->cancelled = true;
    uring_->cancel(recvOperation_);
  }
}

void TcpConnection::received(int res, uint32_t flags, bool last) {
  loop_->assertInLoopThread();
  if (last) recvOperation_ = nullptr;
  UringReceiveBlocks* blocks = uring_->receiveBlocks();
  if (res > 0) {
    // Into the input buffer: the block swapped in whole when the input
    // buffer is empty (the common case), else appended. The message
    // callback runs after the batch of completions (deliverReceived),
    // which then re-arms.
    const bool open = isOpen(state_.load());
    blocks->take(res, flags, open ? &inputBuffer_ : nullptr);
    if (open && !deliveryQueued_) {
      deliveryQueued_ = true;
      uring_->afterCompletions([self = shared_from_this()] { self->deliverReceived(); });
    }
    return;
  }
  blocks->take(res, flags, nullptr);  // a block, if the kernel took one, goes back
  if (res == 0) {
    deliverReceived();  // what came before the FIN first
    if (isOpen(state_.load())) peerClosed();
    return;
  }
  if (res == -ENOBUFS) {
    // Every block of the ring was taken in this batch: one more, and the
    // receive again with the next enter.
    blocks->grow();
  } else if (res != -ECANCELED) {
    deliverReceived();
    if (isOpen(state_.load())) ioFailed("receive", -res);
    return;
  }
  // Cancelled (stopRead, perhaps followed by startRead), or out of blocks.
  const StateE s = state_.load();
  if (last && reading_ && isOpen(s) && s != kPeerClosed) startReceiving();
}

void TcpConnection::deliverReceived() {
  if (!deliveryQueued_) return;
  deliveryQueued_ = false;
  if (!isOpen(state_.load())) return;
  bytesReceived(loop_->pollReturnTime());
  // A callback that took every byte leaves an empty block behind.
  uring_->receiveBlocks()->recycle(&inputBuffer_);
  const StateE s = state_.load();
  if (reading_ && isOpen(s) && s != kPeerClosed) startReceiving();
}

// Nothing in flight: up to kMaxSendBytes of data become the next send
// request. A whole Buffer `source` is taken as it is (swapped with sending_,
// no copy): send(Buffer*) empties it anyway. Returns how many bytes it took.
size_t TcpConnection::sendNow(std::string_view data, Buffer* source) {
  assert(sendOperation_ == nullptr);
  sending_.retrieveAll();
  if (source != nullptr && data.size() <= kMaxSendBytes && data.data() == source->peek() &&
      data.size() == source->readableBytes()) {
    sending_.swap(*source);
  } else {
    const size_t n = std::min(data.size(), kMaxSendBytes);
    uring_->receiveBlocks()->lend(&sending_, n);  // a warm block for a short copy
    sending_.append(data.data(), n);
  }
  const size_t n = sending_.readableBytes();
  submitSend();
  return n;
}

void TcpConnection::startSending() {
  if (sendOperation_ != nullptr || outputBuffer_.readableBytes() == 0) return;
  const size_t n = sendNow(outputBuffer_.toStringView(), nullptr);
  outputBuffer_.retrieve(n);
}

// Sends what is left in sending_, which stays untouched until the completion.
void TcpConnection::submitSend() {
  assert(sendOperation_ == nullptr && sending_.readableBytes() > 0);
  sendOperation_ = new SendOperation(shared_from_this());
  struct io_uring_sqe* sqe = uring_->prepare(sendOperation_);
  io_uring_prep_send(sqe, channel_->fd(), sending_.peek(), sending_.readableBytes(), MSG_NOSIGNAL);
}

void TcpConnection::sent(int res) {
  loop_->assertInLoopThread();
  sendOperation_ = nullptr;
  if (!isOpen(state_.load())) return;  // cancelled by the close
  if (res < 0) {
    if (res != -ECANCELED) ioFailed("send", -res);
    return;
  }
  sending_.retrieve(static_cast<size_t>(res));
  if (sending_.readableBytes() > 0) {
    submitSend();  // the socket took part of it: the rest, as it is
  } else {
    uring_->receiveBlocks()->recycle(&sending_);
    startSending();  // the next bytes queued, if any
  }
  if (!writing()) outputDrained();
}

void TcpConnection::cancelCompletions() {
  stopReceiving();
  if (sendOperation_ != nullptr && !sendOperation_->cancelled) {
    sendOperation_->cancelled = true;
    uring_->cancel(sendOperation_);
  }
}

}  // namespace net
}  // namespace muon

#else  // !MUON_HAVE_URING: uring_ is always null and none of these is reached.

namespace muon {
namespace net {
void TcpConnection::startReceiving() {}
void TcpConnection::stopReceiving() {}
void TcpConnection::received(int, uint32_t, bool) {}
void TcpConnection::deliverReceived() {}
size_t TcpConnection::sendNow(std::string_view, Buffer*) { return 0; }
void TcpConnection::startSending() {}
void TcpConnection::submitSend() {}
void TcpConnection::sent(int) {}
void TcpConnection::cancelCompletions() {}
}  // namespace net
}  // namespace muon

#endif
