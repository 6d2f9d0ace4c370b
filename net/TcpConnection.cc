#include "muon/net/TcpConnection.h"

#include <errno.h>

#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"
#include "muon/net/Socket.h"
#include "muon/net/SocketsOps.h"

namespace muon {
namespace net {

void defaultConnectionCallback(const TcpConnectionPtr& conn) {
  LOG_TRACE << conn->localAddress().toIpPort() << " -> " << conn->peerAddress().toIpPort() << " is "
            << (conn->connected() ? "UP" : "DOWN");
}

void defaultMessageCallback(const TcpConnectionPtr&, Buffer* buf, Timestamp) { buf->retrieveAll(); }

TcpConnection::TcpConnection(EventLoop* loop, std::string name, int sockfd,
                             const InetAddress& localAddr, const InetAddress& peerAddr)
    : loop_(loop),
      name_(std::move(name)),
      state_(kConnecting),
      reading_(true),
      peerClosed_(false),
      writeShutdown_(false),
      socket_(std::make_unique<Socket>(sockfd)),
      channel_(std::make_unique<Channel>(loop, sockfd)),
      localAddr_(localAddr),
      peerAddr_(peerAddr),
      connectionCallback_(defaultConnectionCallback),
      messageCallback_(defaultMessageCallback),
      highWaterMark_(64 * 1024 * 1024) {
  channel_->setReadCallback([this](Timestamp t) { handleRead(t); });
  channel_->setWriteCallback([this] { handleWrite(); });
  channel_->setCloseCallback([this] { handleClose(); });
  channel_->setErrorCallback([this] { handleError(); });
  LOG_DEBUG << "TcpConnection::ctor[" << name_ << "] at " << static_cast<const void*>(this)
            << " fd=" << sockfd;
  socket_->setKeepAlive(true);
}

TcpConnection::~TcpConnection() {
  LOG_DEBUG << "TcpConnection::dtor[" << name_ << "] at " << static_cast<const void*>(this)
            << " fd=" << channel_->fd() << " state=" << stateToString();
  assert(state_ == kDisconnected);
}

bool TcpConnection::getTcpInfo(struct tcp_info* info) const { return socket_->getTcpInfo(info); }

std::string TcpConnection::getTcpInfoString() const { return socket_->getTcpInfoString(); }

void TcpConnection::send(std::string_view message) {
  if (state_.load(std::memory_order_acquire) != kConnected) return;
  if (loop_->isInLoopThread()) {
    sendInLoop(message.data(), message.size());
  } else {
    loop_->runInLoop([self = shared_from_this(), copy = std::string(message)] {
      self->sendInLoop(copy.data(), copy.size());
    });
  }
}

void TcpConnection::send(std::string&& message) {
  if (state_.load(std::memory_order_acquire) != kConnected) return;
  if (loop_->isInLoopThread()) {
    sendInLoop(message.data(), message.size());
  } else {
    loop_->runInLoop([self = shared_from_this(), moved = std::move(message)] {
      self->sendInLoop(moved.data(), moved.size());
    });
  }
}

void TcpConnection::send(Buffer* buf) {
  if (state_.load(std::memory_order_acquire) != kConnected) return;
  if (loop_->isInLoopThread()) {
    sendInLoop(buf->peek(), buf->readableBytes());
    buf->retrieveAll();
  } else {
    send(buf->retrieveAllAsString());
  }
}

void TcpConnection::sendInLoop(const char* data, size_t len) {
  loop_->assertInLoopThread();
  if (state_ == kDisconnected) {
    LOG_WARN << "TcpConnection::sendInLoop[" << name_ << "] disconnected, give up writing";
    return;
  }
  if (writeShutdown_) {
    // Sent from another thread before shutdown(), arriving after the FIN.
    // Writing would fail with EPIPE and force-close the connection, losing
    // what the peer may still send us.
    LOG_WARN << "TcpConnection::sendInLoop[" << name_ << "] shut down for writing, give up writing";
    return;
  }
  size_t written = 0;
  bool faultError = false;
  // Nothing queued: try the socket directly, the common case.
  if (!channel_->isWriting() && outputBuffer_.readableBytes() == 0) {
    ssize_t n = sockets::write(channel_->fd(), data, len);
    if (n >= 0) {
      written = static_cast<size_t>(n);
      if (written == len && writeCompleteCallback_) {
        // Queued, not called: the user is inside a callback that sends, and
        // a write-complete callback that sends again must not recurse.
        loop_->queueInLoop([self = shared_from_this()] { self->writeCompleteCallback_(self); });
      }
    } else {
      const int savedErrno = errno;  // before logging can change it
      if (savedErrno == EPIPE || savedErrno == ECONNRESET) {
        // A peer that went away is the network's business, not an error of ours.
        LOG_WARN << "TcpConnection::sendInLoop[" << name_ << "] " << strerror_tl(savedErrno);
        faultError = true;
      } else if (savedErrno != EAGAIN) {
        LOG_SYSERR << "TcpConnection::sendInLoop[" << name_ << "]";
      }
    }
  }
  if (faultError) {
    // The peer is gone. Close once, after the current callback returns: the
    // read side would never notice while reading is stopped.
    loop_->queueInLoop([self = shared_from_this()] { self->forceCloseInLoop(); });
    return;
  }
  const size_t remaining = len - written;
  if (remaining > 0) {
    const size_t oldLen = outputBuffer_.readableBytes();
    if (oldLen + remaining >= highWaterMark_ && oldLen < highWaterMark_ && highWaterMarkCallback_) {
      loop_->queueInLoop([self = shared_from_this(), size = oldLen + remaining] {
        self->highWaterMarkCallback_(self, size);
      });
    }
    outputBuffer_.append(data + written, remaining);
    channel_->enableWriting();
  }
}

void TcpConnection::shutdown() {
  StateE expected = kConnected;
  if (state_.compare_exchange_strong(expected, kDisconnecting)) {
    loop_->runInLoop([self = shared_from_this()] { self->shutdownInLoop(); });
  }
}

void TcpConnection::shutdownInLoop() {
  loop_->assertInLoopThread();
  // Still writing: handleWrite half-closes once the buffer is empty.
  if (!channel_->isWriting() && !writeShutdown_) {
    writeShutdown_ = true;
    socket_->shutdownWrite();
  }
}

void TcpConnection::forceClose() {
  StateE s = state_.load();
  if ((s == kConnected || s == kDisconnecting) && state_.compare_exchange_strong(s, kDisconnecting)) {
    loop_->queueInLoop([self = shared_from_this()] { self->forceCloseInLoop(); });
  }
}

void TcpConnection::forceCloseWithDelay(double seconds) {
  StateE s = state_.load();
  if ((s == kConnected || s == kDisconnecting) && state_.compare_exchange_strong(s, kDisconnecting)) {
    // A weak_ptr: the timer must not keep the connection alive.
    std::weak_ptr<TcpConnection> weak = shared_from_this();
    loop_->runAfter(seconds, [weak] {
      if (TcpConnectionPtr conn = weak.lock()) conn->forceClose();
    });
  }
}

void TcpConnection::forceCloseInLoop() {
  loop_->assertInLoopThread();
  StateE s = state_.load();
  if (s == kConnected || s == kDisconnecting) handleClose();
}

void TcpConnection::setTcpNoDelay(bool on) { socket_->setTcpNoDelay(on); }

void TcpConnection::startRead() {
  loop_->runInLoop([self = shared_from_this()] { self->startReadInLoop(); });
}

void TcpConnection::stopRead() {
  loop_->runInLoop([self = shared_from_this()] { self->stopReadInLoop(); });
}

void TcpConnection::startReadInLoop() {
  loop_->assertInLoopThread();
  reading_ = true;
  // After EOF there is nothing to read, and level-triggered EOF would spin.
  if (!peerClosed_ && state_ != kDisconnected) channel_->enableReading();
}

void TcpConnection::stopReadInLoop() {
  loop_->assertInLoopThread();
  reading_ = false;
  channel_->disableReading();
}

void TcpConnection::connectEstablished() {
  loop_->assertInLoopThread();
  assert(state_ == kConnecting);
  setState(kConnected);
  channel_->tie(shared_from_this());
  if (reading_) channel_->enableReading();
  connectionCallback_(shared_from_this());
}

void TcpConnection::connectDestroyed() {
  loop_->assertInLoopThread();
  StateE s = state_.load();
  if (s == kConnected || s == kDisconnecting) {
    // The owner is going away with the connection still open.
    setState(kDisconnected);
    channel_->disableAll();
    connectionCallback_(shared_from_this());
  }
  channel_->remove();
}

void TcpConnection::handleRead(Timestamp receiveTime) {
  loop_->assertInLoopThread();
  // Closed by an earlier callback of this iteration; the event is stale.
  if (state_ == kDisconnected) return;
  int savedErrno = 0;
  ssize_t n = inputBuffer_.readFd(channel_->fd(), &savedErrno);
  if (n > 0) {
    messageCallback_(shared_from_this(), &inputBuffer_, receiveTime);
    if (inputLimit_ > 0 && inputBuffer_.readableBytes() >= inputLimit_ && reading_ &&
        state_ != kDisconnected) {
      stopReadInLoop();
      if (inputLimitCallback_) inputLimitCallback_(shared_from_this(), inputBuffer_.readableBytes());
    }
  } else if (n == 0) {
    // The peer half-closed. Stop reading (EOF stays readable forever) and
    // close once what is queued has been written, so the peer gets every
    // reply it asked for before closing its side.
    peerClosed_ = true;
    channel_->disableReading();
    if (!channel_->isWriting()) {
      handleClose();
    } else {
      StateE expected = kConnected;
      state_.compare_exchange_strong(expected, kDisconnecting);
      LOG_DEBUG << "TcpConnection::handleRead[" << name_ << "] peer half-closed, flushing "
                << outputBuffer_.readableBytes() << " bytes before closing";
    }
  } else if (savedErrno != EAGAIN) {
    // ECONNRESET and friends: the connection is dead, close it now (the
    // next poll would only report the same error again).
    errno = savedErrno;
    LOG_WARN << "TcpConnection::handleRead[" << name_ << "] " << strerror_tl(savedErrno);
    handleClose();
  }
}

void TcpConnection::handleWrite() {
  loop_->assertInLoopThread();
  if (!channel_->isWriting()) {
    LOG_TRACE << "Connection fd = " << channel_->fd() << " is down, no more writing";
    return;
  }
  ssize_t n = sockets::write(channel_->fd(), outputBuffer_.peek(), outputBuffer_.readableBytes());
  if (n > 0) {
    outputBuffer_.retrieve(static_cast<size_t>(n));
    if (outputBuffer_.readableBytes() == 0) {
      channel_->disableWriting();
      if (writeCompleteCallback_) writeCompleteCallback_(shared_from_this());
      if (state_ == kDisconnecting) {
        shutdownInLoop();
        // Both directions are finished.
        if (peerClosed_) handleClose();
      }
    }
  } else if (n < 0 && errno != EAGAIN) {
    const int savedErrno = errno;
    if (savedErrno == EPIPE || savedErrno == ECONNRESET) {
      LOG_WARN << "TcpConnection::handleWrite[" << name_ << "] " << strerror_tl(savedErrno);
    } else {
      LOG_SYSERR << "TcpConnection::handleWrite[" << name_ << "]";
    }
    handleClose();
  }
}

void TcpConnection::handleClose() {
  loop_->assertInLoopThread();
  StateE s = state_.load();
  if (s == kDisconnected) return;  // closed already (say, by an earlier error this iteration)
  LOG_TRACE << "fd = " << channel_->fd() << " state = " << stateToString();
  assert(s == kConnected || s == kDisconnecting);
  setState(kDisconnected);
  channel_->disableAll();
  // The peer sees the end now, even if user code still holds the
  // connection.
  // The fd itself stays ours until the destructor, so its number cannot be
  // reused under a stale TcpConnectionPtr.
  socket_->shutdownBoth();
  TcpConnectionPtr guardThis(shared_from_this());
  connectionCallback_(guardThis);
  // Last: it makes the owner forget the connection.
  if (closeCallback_) closeCallback_(guardThis);
}

void TcpConnection::handleError() {
  int err = sockets::getSocketError(channel_->fd());
  LOG_DEBUG << "TcpConnection::handleError [" << name_ << "] - SO_ERROR = " << err << " "
            << strerror_tl(err);
}

const char* TcpConnection::stateToString() const {
  switch (state_.load()) {
    case kDisconnected: return "kDisconnected";
    case kConnecting: return "kConnecting";
    case kConnected: return "kConnected";
    case kDisconnecting: return "kDisconnecting";
  }
  return "unknown state";
}

}  // namespace net
}  // namespace muon
