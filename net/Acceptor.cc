#include "muon/net/internal/Acceptor.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/internal/SocketsOps.h"

namespace muon {
namespace net {

namespace {
int openIdleFd() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }
}  // namespace

Acceptor::Acceptor(EventLoop* loop, const InetAddress& listenAddr, bool reusePort)
    : loop_(loop),
      acceptSocket_(sockets::createNonblockingOrDie(listenAddr.family())),
      acceptChannel_(loop, acceptSocket_.fd()),
      listening_(false),
      paused_(false),
      idleFd_(openIdleFd()),
      rejectedForFds_(0) {
  if (idleFd_ < 0) LOG_SYSERR << "Acceptor: cannot open the spare fd (/dev/null)";
  acceptSocket_.setReuseAddr(true);
  if (reusePort) acceptSocket_.setReusePort(true);
  acceptSocket_.bindAddress(listenAddr);
  acceptChannel_.setReadCallback([this](Timestamp) { handleRead(); });
}

Acceptor::~Acceptor() {
  loop_->assertInLoopThread();
  loop_->cancel(pauseTimer_);
  acceptChannel_.disableAll();
  acceptChannel_.remove();
  if (idleFd_ >= 0) ::close(idleFd_);
}

void Acceptor::listen() {
  if (listening_.exchange(true)) return;
  acceptSocket_.listen();
  loop_->runInLoop([this] { acceptChannel_.enableReading(); });
}

int Acceptor::acceptOne(struct sockaddr_in6* addr) {
  if (acceptFunc_) return acceptFunc_(acceptSocket_.fd(), addr);
  return sockets::accept(acceptSocket_.fd(), addr);
}

void Acceptor::handleRead() {
  loop_->assertInLoopThread();
  // Level-triggered, but draining the backlog in one event saves a poll per
  // connection when many arrive at once.
  for (;;) {
    struct sockaddr_in6 addr {};
    int connfd = acceptOne(&addr);
    if (connfd >= 0) {
      loop_->counters().connectionsAccepted.add(1);
      InetAddress peerAddr(addr);
      if (newConnectionCallback_) {
        newConnectionCallback_(connfd, peerAddr);
      } else {
        sockets::close(connfd);
      }
    } else if (!handleAcceptError(errno)) {
      break;
    }
  }
}

bool Acceptor::handleAcceptError(int savedErrno) {
  errno = savedErrno;
  switch (savedErrno) {
    case EAGAIN:
      return false;  // backlog drained
    case EMFILE:
    case ENFILE: {
      ++rejectedForFds_;
      LOG_SYSERR << "Acceptor::handleRead out of file descriptors; rejecting connection #"
                 << rejectedForFds_ << " on fd " << acceptSocket_.fd();
      if (idleFd_ < 0) {
        pauseAccepting();
        return false;
      }
      // Free the spare, take the connection off the backlog and close it
      // (the client sees EOF instead of hanging), take the spare back.
      ::close(idleFd_);
      struct sockaddr_in6 addr {};
      int connfd = acceptOne(&addr);
      if (connfd >= 0) ::close(connfd);
      idleFd_ = openIdleFd();
      if (idleFd_ < 0) {
        // Someone else took the fd we freed: no spare left, so pause
        // instead of spinning on a backlog we cannot drain.
        LOG_SYSERR << "Acceptor: cannot take the spare fd back";
        pauseAccepting();
        return false;
      }
      return connfd >= 0;
    }
    case ENOBUFS:
    case ENOMEM:
      // The kernel is short of memory: retrying at once would spin.
      LOG_SYSERR << "Acceptor::handleRead; pausing accept for " << kPauseMicros / 1000 << " ms";
      pauseAccepting();
      return false;
    case ECONNABORTED:
    case EPROTO:
    case EPERM:
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH:
    case ETIMEDOUT:
      // One connection failed (accept(2) says: treat like EAGAIN and retry);
      // the next poll comes back here if more are pending.
      LOG_SYSERR << "Acceptor::handleRead accept failed on fd " << acceptSocket_.fd();
      return false;
    default:
      // EBADF, EFAULT, EINVAL, ENOTSOCK: our bug, not the network's.
      LOG_SYSFATAL << "Acceptor::handleRead unexpected accept error on fd " << acceptSocket_.fd();
      return false;
  }
}

void Acceptor::pauseAccepting() {
  if (paused_) return;
  paused_ = true;
  acceptChannel_.disableReading();
  pauseTimer_ = loop_->runAfter(kPauseMicros / 1e6, [this] {
    paused_ = false;
    if (idleFd_ < 0) idleFd_ = openIdleFd();
    acceptChannel_.enableReading();
  });
}

}  // namespace net
}  // namespace muon
