// Acceptor: the listening socket of a TcpServer. Internal header.
//
// Constructed and used in the base loop's thread; listen() is safe from any
// thread. On a readable event it accepts until EAGAIN and hands each new fd
// to the callback.
//
// fd exhaustion (EMFILE / ENFILE): the pending connection would keep the
// listening socket readable and a level-triggered loop would spin. So a
// spare fd (/dev/null) is kept open; on EMFILE it is closed, the connection
// accepted and closed at once (the client sees EOF), and the spare taken
// back. If the spare cannot be taken back, accepting pauses for
// kPauseMicros instead of spinning. ENOBUFS / ENOMEM pause the same way;
// errors that concern one connection only (ECONNABORTED, EPROTO, EPERM,
// network errors) are logged and accepting goes on.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <functional>

#include "muon/net/Channel.h"
#include "muon/net/internal/Socket.h"
#include "muon/net/TimerId.h"

namespace muon {
namespace net {

class EventLoop;
class InetAddress;

class Acceptor {
 public:
  using NewConnectionCallback = std::function<void(int sockfd, const InetAddress&)>;
  // The seam for fault tests: behaves like sockets::accept (fd, or -1 and errno).
  using AcceptFunc = std::function<int(int listenfd, struct sockaddr_in6* addr)>;

  static constexpr int kPauseMicros = 100 * 1000;

  // Creates and binds the socket (aborts if bind fails, e.g. EADDRINUSE).
  Acceptor(EventLoop* loop, const InetAddress& listenAddr, bool reusePort);
  ~Acceptor();
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  // Without a callback, accepted connections are closed.
  void setNewConnectionCallback(NewConnectionCallback cb) { newConnectionCallback_ = std::move(cb); }
  void setAcceptFuncForTesting(AcceptFunc f) { acceptFunc_ = std::move(f); }

  // listen(2) happens now, in the calling thread, so a client may connect as
  // soon as this returns; accepting starts in the loop thread. Idempotent.
  void listen();
  bool listening() const { return listening_.load(); }
  int fd() const { return acceptSocket_.fd(); }
  // Connections rejected for lack of fds so far (loop thread).
  long rejectedForFds() const { return rejectedForFds_; }

 private:
  void handleRead();
  // Returns false when the loop over pending connections must stop.
  bool handleAcceptError(int savedErrno);
  void pauseAccepting();
  int acceptOne(struct sockaddr_in6* addr);

  EventLoop* const loop_;
  Socket acceptSocket_;
  Channel acceptChannel_;
  NewConnectionCallback newConnectionCallback_;
  AcceptFunc acceptFunc_;
  std::atomic<bool> listening_;
  bool paused_;
  TimerId pauseTimer_;
  int idleFd_;
  long rejectedForFds_;
};

}  // namespace net
}  // namespace muon
