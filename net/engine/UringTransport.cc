#include "muon/net/internal/UringTransport.h"

#include <errno.h>
#include <sys/socket.h>

#include <algorithm>
#include <cassert>

#include "muon/net/EventLoop.h"
#include "muon/net/internal/UringPoller.h"

namespace muon {
namespace net {

namespace {
// A send request carries at most this much (copied into sending_, so that
// send() may keep appending to the output buffer meanwhile).
constexpr size_t kMaxSendBytes = 1024 * 1024;
}  // namespace

// A receive or a send in flight.
class UringTransport::Request : public UringPoller::Operation {
 public:
  Request(std::shared_ptr<UringTransport> transport, bool isReceive)
      : transport_(std::move(transport)), isReceive_(isReceive) {
    transport_->references_.fetch_add(1);
  }
  // Also reached without a last completion, when the poller is destroyed
  // with the request in flight.
  ~Request() override {
    Request*& current = isReceive_ ? transport_->receive_ : transport_->send_;
    if (current == this) current = nullptr;
    transport_->references_.fetch_sub(1);
  }
  void complete(int res, uint32_t flags) override {
    if (isReceive_) {
      transport_->received(res, flags);
    } else {
      transport_->sent(res);
    }
  }
  bool cancelled = false;

 private:
  const std::shared_ptr<UringTransport> transport_;
  const bool isReceive_;
};

UringTransport::UringTransport(const Parts& parts, UringPoller* poller)
    : Transport(parts),
      poller_(poller),
      receive_(nullptr),
      send_(nullptr),
      reading_(false),
      closed_(false),
      deliveryQueued_(false),
      references_(0) {}

UringTransport::~UringTransport() {
  // Each request in flight holds a reference: none can be left.
  assert(receive_ == nullptr && send_ == nullptr);
}

void UringTransport::attach(const std::shared_ptr<void>& owner) {
  self_ = std::shared_ptr<UringTransport>(owner, this);
}

void UringTransport::startReading() {
  reading_ = true;
  startReceiving();
}

void UringTransport::stopReading() {
  reading_ = false;
  cancel(receive_);
}

void UringTransport::close() {
  closed_ = true;
  cancel(receive_);
  cancel(send_);
}

void UringTransport::cancel(Request* request) {
  if (request != nullptr && !request->cancelled) {
    request->cancelled = true;
    poller_->cancel(request);
  }
}

// ---- receiving -------------------------------------------------------------

// One receive at a time, re-armed once its bytes have been delivered: so
// reading stops at once when the application stops it (stopRead, the input
// limit, the high-water-mark policy), as on epoll, and each delivery is at
// most one read. A multishot receive would keep posting data until its
// cancellation landed.
void UringTransport::startReceiving() {
  // One in flight already (perhaps being cancelled: its completion re-arms
  // if reading is still wanted).
  if (receive_ != nullptr || deliveryQueued_) return;
  receive_ = new Request(self_.lock(), true);
  poller_->receiveBlocks()->prepareReceive(poller_->prepare(receive_), fd_);
}

void UringTransport::received(int res, uint32_t flags) {
  loop_->assertInLoopThread();
  const bool last = !(flags & IORING_CQE_F_MORE);
  if (last) receive_ = nullptr;
  UringReceiveBlocks* blocks = poller_->receiveBlocks();
  if (res > 0) {
    loop_->counters().bytesReceived.add(static_cast<uint64_t>(res));
    // Into the input buffer: the block swapped in whole when the input
    // buffer is empty (the common case), else appended. The owner hears of
    // it after the batch of completions (deliverReceived), which then
    // re-arms.
    blocks->take(res, flags, closed_ ? nullptr : input_);
    if (!closed_ && !deliveryQueued_) {
      deliveryQueued_ = true;
      poller_->afterCompletions([self = self_.lock()] { self->deliverReceived(); });
    }
    return;
  }
  blocks->take(res, flags, nullptr);  // a block, if the kernel took one, goes back
  if (res == 0) {
    deliverReceived();  // what came before the FIN first
    if (!closed_) owner_->peerClosed();
    return;
  }
  if (res == -ENOBUFS) {
    // Every block of the ring was taken in this batch: one more, and the
    // receive again with the next enter.
    blocks->grow();
  } else if (res != -ECANCELED) {
    deliverReceived();
    if (!closed_) owner_->ioFailed("receive", -res);
    return;
  }
  // Cancelled (stopReading, perhaps followed by startReading), or out of
  // blocks.
  if (last && reading_ && !closed_) startReceiving();
}

void UringTransport::deliverReceived() {
  if (!deliveryQueued_) return;
  deliveryQueued_ = false;
  if (closed_) return;
  owner_->bytesReceived(loop_->pollReturnTime());
  // A callback that took every byte leaves an empty block behind.
  poller_->receiveBlocks()->recycle(input_);
  if (reading_ && !closed_) startReceiving();
}

// ---- sending ---------------------------------------------------------------

// Nothing in flight: up to kMaxSendBytes of data become the next send
// request. A whole Buffer `source` is taken as it is (swapped with sending_,
// no copy). Never fails here: an error comes with the completion.
ssize_t UringTransport::write(std::string_view data, Buffer* source) {
  assert(send_ == nullptr);
  sending_.retrieveAll();
  if (source != nullptr && data.size() <= kMaxSendBytes && data.data() == source->peek() &&
      data.size() == source->readableBytes()) {
    sending_.swap(*source);
  } else {
    const size_t n = std::min(data.size(), kMaxSendBytes);
    poller_->receiveBlocks()->lend(&sending_, n);  // a warm block for a short copy
    sending_.append(data.data(), n);
  }
  const size_t n = sending_.readableBytes();
  submitSend();
  return static_cast<ssize_t>(n);
}

void UringTransport::sendOutput() {
  if (send_ != nullptr || output_->readableBytes() == 0) return;
  const ssize_t n = write(output_->toStringView(), nullptr);
  output_->retrieve(static_cast<size_t>(n));
}

// Sends what is left in sending_, which stays untouched until the completion.
void UringTransport::submitSend() {
  assert(send_ == nullptr && sending_.readableBytes() > 0);
  send_ = new Request(self_.lock(), false);
  struct io_uring_sqe* sqe = poller_->prepare(send_);
  io_uring_prep_send(sqe, fd_, sending_.peek(), sending_.readableBytes(), MSG_NOSIGNAL);
}

void UringTransport::sent(int res) {
  loop_->assertInLoopThread();
  send_ = nullptr;
  if (closed_) return;  // cancelled by the close
  if (res < 0) {
    if (res != -ECANCELED) owner_->ioFailed("send", -res);
    return;
  }
  loop_->counters().bytesSent.add(static_cast<uint64_t>(res));
  sending_.retrieve(static_cast<size_t>(res));
  if (sending_.readableBytes() > 0) {
    submitSend();  // the socket took part of it: the rest, as it is
  } else {
    poller_->receiveBlocks()->recycle(&sending_);
    sendOutput();  // the next bytes queued, if any
  }
  if (send_ == nullptr) owner_->outputDrained();
}

}  // namespace net
}  // namespace muon
