#include "muon/net/TcpConnection.h"

#include <errno.h>

#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/internal/Poller.h"
#include "muon/net/internal/Socket.h"

namespace muon {
namespace net {

void defaultConnectionCallback(const TcpConnectionPtr& conn) {
  LOG_TRACE << conn->localAddress().toIpPort() << " -> " << conn->peerAddress().toIpPort() << " is "
            << (conn->connected() ? "UP" : "DOWN");
}

void defaultMessageCallback(const TcpConnectionPtr&, Buffer* buf, Timestamp) { buf->retrieveAll(); }

TcpConnection::TcpConnection(EventLoop* loop, std::string name, int sockfd,
                             const InetAddress& localAddr, const InetAddress& peerAddr,
                             TransportLayer* layer)
    : loop_(loop),
      name_(std::move(name)),
      state_(kConnecting),
      reading_(true),
      receivedWhileStopped_(false),
      announced_(false),
      socket_(std::make_unique<Socket>(sockfd)),
      transport_(layer != nullptr
                     ? layer->newTransport({loop, sockfd, &name_, this, &inputBuffer_, &outputBuffer_})
                     : loop->poller()->newTransport(
                           {loop, sockfd, &name_, this, &inputBuffer_, &outputBuffer_})),
      localAddr_(localAddr),
      peerAddr_(peerAddr),
      connectionCallback_(defaultConnectionCallback),
      messageCallback_(defaultMessageCallback),
      highWaterMark_(64 * 1024 * 1024) {
  LOG_DEBUG << "TcpConnection::ctor[" << name_ << "] at " << static_cast<const void*>(this)
            << " fd=" << sockfd;
  socket_->setKeepAlive(true);
}

TcpConnection::~TcpConnection() {
  LOG_DEBUG << "TcpConnection::dtor[" << name_ << "] at " << static_cast<const void*>(this)
            << " fd=" << socket_->fd() << " state=" << stateToString();
  assert(state_ == kDisconnected);
}

bool TcpConnection::getTcpInfo(struct tcp_info* info) const { return socket_->getTcpInfo(info); }

std::string TcpConnection::getTcpInfoString() const { return socket_->getTcpInfoString(); }

// ---- sending ---------------------------------------------------------------

template <typename MakeOwned>
bool TcpConnection::sendFrom(std::string_view data, MakeOwned makeOwned, Buffer* source) {
  if (state_.load(std::memory_order_acquire) != kConnected) return false;
  if (loop_->isInLoopThread()) {
    sendInLoop(data, source);
  } else {
    loop_->queueInLoop([self = shared_from_this(), owned = makeOwned()] { self->sendInLoop(owned); });
  }
  return true;
}

bool TcpConnection::send(std::string_view message) {
  return sendFrom(message, [message] { return std::string(message); });
}

bool TcpConnection::send(std::string&& message) {
  return sendFrom(message, [&message] { return std::move(message); });
}

bool TcpConnection::send(Buffer* buf) {
  // From another thread the bytes are taken out as a string; in the loop
  // thread they are sent from where they are (the transport may take the
  // buffer's storage whole). Then, taken or dropped, they are gone.
  const bool taken = sendFrom(buf->toStringView(), [buf] { return buf->retrieveAllAsString(); }, buf);
  buf->retrieveAll();
  return taken;
}

void TcpConnection::sendInLoop(std::string_view data, Buffer* source) {
  loop_->assertInLoopThread();
  const StateE s = state_.load();
  if (s == kDisconnected) {
    LOG_WARN << "TcpConnection::sendInLoop[" << name_ << "] disconnected, give up writing";
    return;
  }
  if (s == kWriteClosed) {
    // Sent from another thread before shutdown(), arriving after the FIN.
    // Writing would fail with EPIPE and force-close the connection, losing
    // what the peer may still send us.
    LOG_WARN << "TcpConnection::sendInLoop[" << name_ << "] shut down for writing, give up writing";
    return;
  }
  size_t written = 0;
  if (!outputQueued()) {
    // Nothing queued: straight to the transport, the common case (a write
    // on the readiness engines, a send request on io_uring).
    const ssize_t n = transport_->write(data, source);
    if (n >= 0) {
      written = static_cast<size_t>(n);
      // All written, none still in flight (io_uring reports outputDrained
      // when its send completes instead).
      if (written == data.size() && writeCompleteCallback_ && !transport_->writing()) {
        // Queued, not called: the user is inside a callback that sends, and
        // a write-complete callback that sends again must not recurse.
        loop_->queueInLoop([self = shared_from_this()] { self->writeCompleteCallback_(self); });
      }
    } else {
      const int savedErrno = static_cast<int>(-n);
      if (savedErrno == EPIPE || savedErrno == ECONNRESET) {
        // The peer is gone. Close once, after the current callback returns:
        // the read side would never notice while reading is stopped.
        LOG_WARN << "TcpConnection::sendInLoop[" << name_ << "] " << strerror_tl(savedErrno);
        loop_->queueInLoop([self = shared_from_this()] { self->forceCloseInLoop(); });
        return;
      }
      if (savedErrno != EAGAIN) {
        errno = savedErrno;
        LOG_SYSERR << "TcpConnection::sendInLoop[" << name_ << "]";
      }
    }
  }
  const size_t remaining = data.size() - written;
  if (remaining > 0) {
    const size_t oldLen = outputBuffer_.readableBytes();
    if (oldLen + remaining >= highWaterMark_ && oldLen < highWaterMark_ && highWaterMarkCallback_) {
      loop_->queueInLoop([self = shared_from_this(), size = oldLen + remaining] {
        self->highWaterMarkCallback_(self, size);
        // Queued, so the output may have drained before cb ran, its
        // write-complete callback called first: one that resumes what cb
        // paused would never come. It is called again, after cb.
        if (self->writeCompleteCallback_ && !self->outputQueued() && isOpen(self->state_.load())) {
          self->writeCompleteCallback_(self);
        }
      });
    }
    outputBuffer_.append(data.data() + written, remaining);
    transport_->sendOutput();
  }
}

// Everything queued has been written.
void TcpConnection::outputDrained() {
  if (writeCompleteCallback_) writeCompleteCallback_(shared_from_this());
  const StateE s = state_.load();
  if (s == kShutdownPending) {
    shutdownInLoop();
  } else if (s == kPeerClosed) {
    handleClose();  // both directions are finished
  }
}

void TcpConnection::shutdown() {
  StateE expected = kConnected;
  if (state_.compare_exchange_strong(expected, kShutdownPending)) {
    loop_->runInLoop([self = shared_from_this()] { self->shutdownInLoop(); });
  }
}

void TcpConnection::shutdownInLoop() {
  loop_->assertInLoopThread();
  // Still writing: outputDrained comes back here once the queue is empty.
  if (outputQueued()) return;
  StateE expected = kShutdownPending;
  // A forceClose() from another thread may have won; it closes instead.
  if (state_.compare_exchange_strong(expected, kWriteClosed)) transport_->shutdownWrite();
}

void TcpConnection::forceClose() {
  StateE s = state_.load();
  // From kClosing too: a forceCloseWithDelay() pending is cut short.
  while (isOpen(s)) {
    if (state_.compare_exchange_weak(s, kClosing)) {
      loop_->queueInLoop([self = shared_from_this()] { self->forceCloseInLoop(); });
      return;
    }
  }
}

void TcpConnection::forceCloseWithDelay(double seconds) {
  StateE s = state_.load();
  while (isOpen(s) && s != kClosing) {
    if (state_.compare_exchange_weak(s, kClosing)) {
      // A weak_ptr: the timer must not keep the connection alive.
      std::weak_ptr<TcpConnection> weak = shared_from_this();
      loop_->runAfter(seconds, [weak] {
        if (TcpConnectionPtr conn = weak.lock()) conn->forceCloseInLoop();
      });
      return;
    }
  }
}

void TcpConnection::forceCloseInLoop() {
  loop_->assertInLoopThread();
  if (isOpen(state_.load())) handleClose();
}

void TcpConnection::setTcpNoDelay(bool on) { socket_->setTcpNoDelay(on); }
void TcpConnection::setTcpQuickAck() { socket_->setTcpQuickAck(); }

// ---- reading ---------------------------------------------------------------

void TcpConnection::startRead() {
  loop_->runInLoop([self = shared_from_this()] { self->startReadInLoop(); });
}

void TcpConnection::stopRead() {
  loop_->runInLoop([self = shared_from_this()] { self->stopReadInLoop(); });
}

void TcpConnection::startReadInLoop() {
  loop_->assertInLoopThread();
  reading_ = true;
  const StateE s = state_.load();
  // After the peer's FIN there is nothing to read (and a level-triggered
  // EOF would spin).
  if (s != kPeerClosed && isOpen(s)) transport_->startReading();
  if (receivedWhileStopped_ && isOpen(s)) {
    // Bytes the kernel had already handed over when reading stopped.
    receivedWhileStopped_ = false;
    loop_->queueInLoop([self = shared_from_this()] {
      if (self->reading_ && isOpen(self->state_.load())) {
        self->messageCallback_(self, &self->inputBuffer_, self->loop_->pollReturnTime());
      }
    });
  }
}

void TcpConnection::stopReadInLoop() {
  loop_->assertInLoopThread();
  reading_ = false;
  transport_->stopReading();
}

// New bytes are at the end of the input buffer.
void TcpConnection::bytesReceived(Timestamp receiveTime) {
  if (!reading_) {
    // Handed over by the transport after stopRead(): kept for startRead().
    receivedWhileStopped_ = true;
    return;
  }
  messageCallback_(shared_from_this(), &inputBuffer_, receiveTime);
  if (inputLimit_ > 0 && inputBuffer_.readableBytes() >= inputLimit_ && reading_ &&
      isOpen(state_.load())) {
    stopReadInLoop();
    if (inputLimitCallback_) inputLimitCallback_(shared_from_this(), inputBuffer_.readableBytes());
  }
}

// The peer half-closed. Reading stops (EOF stays readable forever); the
// connection closes once what is queued has been written, so the peer gets
// every reply it asked for before closing its side.
void TcpConnection::peerClosed() {
  transport_->stopReading();
  const bool queued = outputQueued();
  StateE s = state_.load();
  for (;;) {
    if (!isOpen(s)) return;
    if (!queued || s == kWriteClosed || s == kClosing) {
      handleClose();
      return;
    }
    if (state_.compare_exchange_weak(s, kPeerClosed)) break;
  }
  LOG_DEBUG << "TcpConnection::peerClosed[" << name_ << "] flushing "
            << outputBuffer_.readableBytes() << " bytes before closing";
}

// A read or write failed with err: the connection is dead, close it now
// (the next poll would only report the same error again).
void TcpConnection::ioFailed(const char* where, int err) {
  if (err == EPIPE || err == ECONNRESET) {
    // A peer that went away is the network's business, not an error of ours.
    LOG_WARN << "TcpConnection::" << where << "[" << name_ << "] " << strerror_tl(err);
  } else {
    errno = err;
    LOG_SYSERR << "TcpConnection::" << where << "[" << name_ << "]";
  }
  handleClose();
}

// ---- lifecycle -------------------------------------------------------------

void TcpConnection::connectEstablished() {
  loop_->assertInLoopThread();
  assert(state_ == kConnecting);
  // With a handshake to make, the connection is up once it is done
  // (handshakeDone); the layer reads meanwhile whatever reading_ says.
  const bool handshake = transport_->needsHandshake();
  setState(handshake ? kHandshaking : kConnected);
  loop_->counters().connectionsOpened.add(1);
  transport_->attach(shared_from_this());
  if (reading_ && isOpen(state_.load())) transport_->startReading();
  if (!handshake) {
    announced_ = true;
    connectionCallback_(shared_from_this());
  }
}

void TcpConnection::handshakeDone() {
  StateE expected = kHandshaking;
  // A forceClose() may have come meanwhile: its close follows, unannounced.
  if (!state_.compare_exchange_strong(expected, kConnected)) return;
  announced_ = true;
  connectionCallback_(shared_from_this());
}

void TcpConnection::handshakeFailed(const std::string& reason) {
  if (!isOpen(state_.load())) return;
  // A warning unless the application takes the reason itself (a client that
  // retries would repeat it on every attempt).
  if (handshakeFailureCallback_) {
    LOG_DEBUG << "TcpConnection::handshakeFailed[" << name_ << "] " << peerAddr_.toIpPort() << ": "
              << reason;
    handshakeFailureCallback_(shared_from_this(), reason);
  } else {
    LOG_WARN << "TcpConnection::handshakeFailed[" << name_ << "] " << peerAddr_.toIpPort() << ": "
             << reason;
  }
  handleClose();
}

void TcpConnection::connectDestroyed() {
  loop_->assertInLoopThread();
  if (isOpen(state_.load())) {
    // The owner is going away with the connection still open.
    setState(kDisconnected);
    transport_->close();
    if (announced_) connectionCallback_(shared_from_this());
  }
  loop_->counters().connectionsClosed.add(1);
  transport_->detach();
}

void TcpConnection::handleClose() {
  loop_->assertInLoopThread();
  // Closed already (say, by an earlier error this iteration).
  if (state_.load() == kDisconnected) return;
  LOG_TRACE << "fd = " << socket_->fd() << " state = " << stateToString();
  setState(kDisconnected);
  transport_->close();
  // The peer sees the end now, even if user code still holds the
  // connection.
  // The fd itself stays ours until the destructor, so its number cannot be
  // reused under a stale TcpConnectionPtr.
  socket_->shutdownBoth();
  TcpConnectionPtr guardThis(shared_from_this());
  // Not for a connection that never came up (its handshake failed).
  if (announced_) connectionCallback_(guardThis);
  // Last: it makes the owner forget the connection.
  if (closeCallback_) closeCallback_(guardThis);
}

const char* TcpConnection::stateToString() const {
  switch (state_.load()) {
    case kConnecting: return "kConnecting";
    case kHandshaking: return "kHandshaking";
    case kConnected: return "kConnected";
    case kShutdownPending: return "kShutdownPending";
    case kWriteClosed: return "kWriteClosed";
    case kPeerClosed: return "kPeerClosed";
    case kClosing: return "kClosing";
    case kDisconnected: return "kDisconnected";
  }
  return "unknown state";
}

}  // namespace net
}  // namespace muon
