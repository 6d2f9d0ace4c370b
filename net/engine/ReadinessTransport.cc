#include "muon/net/internal/ReadinessTransport.h"

#include <errno.h>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/internal/LoopBuffer.h"
#include "muon/net/internal/SocketsOps.h"

namespace muon {
namespace net {

namespace {

// The readiness engines' receive buffer, one per loop thread, lent to a
// connection with nothing buffered for its read and message callback
// (LoopBuffer.h). Its size lets one recv(2) take 64 KiB
// (Buffer::readSocket).
thread_local LoopBuffer t_receiveBuffer;

}  // namespace

ReadinessTransport::ReadinessTransport(const Parts& parts)
    : Transport(parts), channel_(parts.loop, parts.fd), closed_(false) {
  channel_.setReadCallback([this](Timestamp t) { handleRead(t); });
  channel_.setWriteCallback([this] { handleWrite(); });
  channel_.setCloseCallback([this] { owner_->hungUp(); });
  channel_.setErrorCallback([this] { handleError(); });
}

ReadinessTransport::~ReadinessTransport() = default;

ssize_t ReadinessTransport::write(std::string_view data, Buffer*) {
  const ssize_t n = sockets::write(fd_, data.data(), data.size());
  if (n < 0) return -errno;
  loop_->counters().bytesSent.add(static_cast<uint64_t>(n));
  return n;
}

void ReadinessTransport::close() {
  closed_ = true;
  channel_.disableAll();
}

void ReadinessTransport::handleRead(Timestamp receiveTime) {
  loop_->assertInLoopThread();
  // Closed by an earlier callback of this iteration; the event is stale.
  if (closed_) return;
  int savedErrno = 0;
  ssize_t n;
  {
    BufferLoan loan(input_, &t_receiveBuffer);
    n = input_->readSocket(fd_, &savedErrno);
    if (n > 0) {
      loop_->counters().bytesReceived.add(static_cast<uint64_t>(n));
      owner_->bytesReceived(receiveTime);
    }
  }
  if (n == 0) {
    owner_->peerClosed();
  } else if (n < 0 && savedErrno != EAGAIN) {
    owner_->ioFailed("handleRead", savedErrno);
  }
}

void ReadinessTransport::handleWrite() {
  loop_->assertInLoopThread();
  if (!channel_.isWriting()) {
    LOG_TRACE << "Connection fd = " << fd_ << " is down, no more writing";
    return;
  }
  const ssize_t n = sockets::write(fd_, output_->peek(), output_->readableBytes());
  if (n > 0) {
    loop_->counters().bytesSent.add(static_cast<uint64_t>(n));
    output_->retrieve(static_cast<size_t>(n));
    if (output_->readableBytes() > 0) return;
    channel_.disableWriting();
    owner_->outputDrained();
  } else if (n < 0 && errno != EAGAIN) {
    owner_->ioFailed("handleWrite", errno);
  }
}

void ReadinessTransport::handleError() {
  const int err = sockets::getSocketError(fd_);
  LOG_DEBUG << "TcpConnection::handleError [" << name_ << "] - SO_ERROR = " << err << " "
            << strerror_tl(err);
}

}  // namespace net
}  // namespace muon
