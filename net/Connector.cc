#include "muon/net/internal/Connector.h"

#include <errno.h>

#include <algorithm>
#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"
#include "muon/net/internal/SocketsOps.h"

namespace muon {
namespace net {

Connector::Connector(EventLoop* loop, const InetAddress& serverAddr)
    : loop_(loop),
      serverAddr_(serverAddr),
      connect_(false),
      state_(kDisconnected),
      initRetryDelayMs_(kDefaultInitRetryDelayMs),
      maxRetryDelayMs_(kDefaultMaxRetryDelayMs),
      retryDelayMs_(kDefaultInitRetryDelayMs),
      connectTimeoutMs_(kDefaultConnectTimeoutMs) {
  LOG_DEBUG << "Connector ctor[" << static_cast<const void*>(this) << "]";
}

Connector::~Connector() {
  LOG_DEBUG << "Connector dtor[" << static_cast<const void*>(this) << "]";
  assert(!channel_);
}

void Connector::setRetryDelayMs(int initialMs, int maxMs) {
  assert(initialMs > 0 && maxMs >= initialMs);
  initRetryDelayMs_ = initialMs;
  maxRetryDelayMs_ = maxMs;
  retryDelayMs_ = initialMs;
}

void Connector::setConnectTimeoutMs(int ms) {
  assert(ms >= 0);
  connectTimeoutMs_ = ms;
}

void Connector::start() {
  connect_ = true;
  loop_->runInLoop([self = shared_from_this()] { self->startInLoop(); });
}

void Connector::startInLoop() {
  loop_->assertInLoopThread();
  // A retry still scheduled from an earlier failure is superseded by this
  // start: left pending, it would fire after the connection was made and
  // open a second one.
  if (retryTimer_.valid()) {
    loop_->cancel(retryTimer_);
    retryTimer_ = TimerId();
  }
  // An attempt in flight finishes on its own; a connection handed over is
  // the owner's until it reports it gone (connectionClosed or restart).
  if (state_ != kDisconnected) return;
  if (connect_) {
    connect();
  } else {
    LOG_DEBUG << "Connector: stopped, not connecting";
  }
}

void Connector::stop() {
  connect_ = false;
  // Queued even in the loop thread: stop() may be called from a callback of
  // the very event this connector is about to handle.
  loop_->queueInLoop([self = shared_from_this()] { self->stopInLoop(); });
}

void Connector::stopInLoop() {
  loop_->assertInLoopThread();
  loop_->cancel(retryTimer_);
  if (state_ == kConnecting) {
    setState(kDisconnected);
    sockets::close(removeAndResetChannel());
  }
}

void Connector::connectionClosed() {
  loop_->assertInLoopThread();
  if (state_ == kConnected) setState(kDisconnected);
}

void Connector::restart() {
  loop_->assertInLoopThread();
  setState(kDisconnected);
  retryDelayMs_ = initRetryDelayMs_;
  connect_ = true;
  startInLoop();
}

void Connector::connect() {
  int sockfd = sockets::createNonblocking(serverAddr_.family());
  if (sockfd < 0) {
    // Out of fds, most likely: try again later.
    const int savedErrno = errno;
    LOG_SYSERR << "Connector::connect cannot create a socket";
    attemptFailed(-1, savedErrno, true);
    return;
  }
  int ret = sockets::connect(sockfd, serverAddr_.getSockAddr(), serverAddr_.sockLen());
  int savedErrno = ret == 0 ? 0 : errno;
  switch (savedErrno) {
    case 0:
    case EINPROGRESS:
    case EINTR:  // the connection goes on asynchronously
    case EISCONN:
      connecting(sockfd);
      break;
    case EAGAIN:
    case EADDRINUSE:
    case EADDRNOTAVAIL:
    case ECONNREFUSED:
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ETIMEDOUT:
      attemptFailed(sockfd, savedErrno, true);
      break;
    default:
      // EACCES, EPERM, EAFNOSUPPORT, EBADF, ENOTSOCK...: retrying won't help.
      errno = savedErrno;
      LOG_SYSERR << "Connector::connect to " << serverAddr_.toIpPort() << " failed; giving up";
      attemptFailed(sockfd, savedErrno, false);
      break;
  }
}

void Connector::connecting(int sockfd) {
  setState(kConnecting);
  assert(!channel_);
  channel_ = std::make_unique<Channel>(loop_, sockfd);
  channel_->setWriteCallback([this] { handleWrite(); });
  channel_->setErrorCallback([this] { handleError(); });
  channel_->doNotLogHup();
  // A callback (newConnection -> user code) may drop the last owner.
  channel_->tie(shared_from_this());
  if (!channel_->enableWriting()) {
    // The poller refused the socket (epoll out of watches: ENOSPC, ENOMEM):
    // nothing would ever report the outcome, so the attempt fails now.
    const int err = errno;
    attemptFailed(removeAndResetChannel(), err, true);
    return;
  }
  if (connectTimeoutMs_ > 0) {
    std::weak_ptr<Connector> weak(shared_from_this());
    connectTimer_ = loop_->runAfter(connectTimeoutMs_ / 1000.0, [weak] {
      if (std::shared_ptr<Connector> self = weak.lock()) self->handleTimeout();
    });
  }
}

// Ends the attempt in flight: its deadline goes, and its socket is returned.
int Connector::removeAndResetChannel() {
  loop_->cancel(connectTimer_);
  connectTimer_ = TimerId();
  channel_->disableAll();
  channel_->remove();
  int sockfd = channel_->fd();
  // We may be inside this channel's handleEvent: destroy it later, after
  // the current batch of events.
  std::shared_ptr<Channel> dead(std::move(channel_));
  loop_->queueInLoop([dead] {});
  return sockfd;
}

void Connector::handleWrite() {
  LOG_TRACE << "Connector::handleWrite state=" << static_cast<int>(state_.load());
  if (state_ != kConnecting) return;  // stopped, or handled by handleError already
  int sockfd = removeAndResetChannel();
  int err = sockets::getSocketError(sockfd);
  if (err != 0) {
    LOG_DEBUG << "Connector::handleWrite - SO_ERROR = " << err << " " << strerror_tl(err);
    attemptFailed(sockfd, err, true);
  } else if (sockets::isSelfConnect(sockfd)) {
    // Nothing listened on the port, and the kernel gave our socket that
    // very port and connected it to itself: a refusal in all but name.
    LOG_WARN << "Connector::handleWrite - self connect";
    attemptFailed(sockfd, ECONNREFUSED, true);
  } else if (!connect_) {
    // stop() came earlier in this iteration (from another fd's callback).
    sockets::close(sockfd);
    setState(kDisconnected);
  } else {
    setState(kConnected);
    newConnectionCallback_(sockfd);
  }
}

void Connector::handleError() {
  if (state_ != kConnecting) return;
  int sockfd = removeAndResetChannel();
  int err = sockets::getSocketError(sockfd);
  LOG_TRACE << "Connector::handleError SO_ERROR = " << err << " " << strerror_tl(err);
  attemptFailed(sockfd, err != 0 ? err : EIO, true);
}

void Connector::handleTimeout() {
  connectTimer_ = TimerId();
  if (state_ != kConnecting) return;
  LOG_WARN << "Connector: connecting to " << serverAddr_.toIpPort() << " timed out after "
           << connectTimeoutMs_ << " milliseconds";
  attemptFailed(removeAndResetChannel(), ETIMEDOUT, true);
}

// The attempt on sockfd (-1: none was made) failed with err. The next one is
// scheduled (tryAgain) before the owner hears of it, and the owner hears of
// it from a queued call, outside this channel's event: its callback may call
// start() (connecting at once) or stop() (cancelling what was scheduled).
void Connector::attemptFailed(int sockfd, int err, bool tryAgain) {
  if (tryAgain) {
    retry(sockfd);
  } else {
    if (sockfd >= 0) sockets::close(sockfd);
    setState(kDisconnected);
  }
  if (!connectFailureCallback_) return;
  loop_->queueInLoop([self = shared_from_this(), err] {
    if (self->connect_) self->connectFailureCallback_(err);
  });
}

void Connector::retry(int sockfd) {
  if (sockfd >= 0) sockets::close(sockfd);
  setState(kDisconnected);
  if (!connect_) {
    LOG_DEBUG << "Connector: stopped, not retrying";
    return;
  }
  // DEBUG: a server away means four attempts a second; the owner hears of
  // each (the connect-failure callback) and decides what people read.
  LOG_DEBUG << "Connector::retry - retry connecting to " << serverAddr_.toIpPort() << " in "
           << retryDelayMs_ << " milliseconds";
  std::weak_ptr<Connector> weak(shared_from_this());
  retryTimer_ = loop_->runAfter(retryDelayMs_ / 1000.0, [weak] {
    if (std::shared_ptr<Connector> self = weak.lock()) self->startInLoop();
  });
  retryDelayMs_ = std::min(retryDelayMs_ * 2, maxRetryDelayMs_);
}

}  // namespace net
}  // namespace muon
