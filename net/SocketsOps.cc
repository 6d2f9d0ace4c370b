#include "muon/net/internal/SocketsOps.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "muon/base/Logging.h"
#include "muon/net/InetAddress.h"

namespace muon {
namespace net {
namespace sockets {

int createNonblocking(sa_family_t family) {
  return ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
}

int createNonblockingOrDie(sa_family_t family) {
  int sockfd = createNonblocking(family);
  if (sockfd < 0) LOG_SYSFATAL << "sockets::createNonblockingOrDie";
  return sockfd;
}

int connect(int sockfd, const struct sockaddr* addr, socklen_t len) {
  return ::connect(sockfd, addr, len);
}

int bind(int sockfd, const InetAddress& addr) {
  return ::bind(sockfd, addr.getSockAddr(), addr.sockLen()) == 0 ? 0 : errno;
}

int listen(int sockfd) { return ::listen(sockfd, SOMAXCONN) == 0 ? 0 : errno; }

int accept(int sockfd, struct sockaddr_in6* addr) {
  socklen_t addrlen = static_cast<socklen_t>(sizeof *addr);
  int connfd;
  do {
    connfd = ::accept4(sockfd, reinterpret_cast<struct sockaddr*>(addr), &addrlen,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
  } while (connfd < 0 && errno == EINTR);
  return connfd;
}

ssize_t read(int sockfd, void* buf, size_t count) {
  ssize_t n;
  do {
    n = ::read(sockfd, buf, count);
  } while (n < 0 && errno == EINTR);
  return n;
}

ssize_t write(int sockfd, const void* buf, size_t count) {
  ssize_t n;
  do {
    n = ::send(sockfd, buf, count, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

void close(int sockfd) {
  // No EINTR retry: on Linux the fd is released even when close is interrupted.
  if (::close(sockfd) < 0) LOG_SYSERR << "sockets::close fd=" << sockfd;
}

void shutdownWrite(int sockfd) {
  // ENOTCONN just means the peer is already gone.
  if (::shutdown(sockfd, SHUT_WR) < 0 && errno != ENOTCONN) {
    LOG_SYSERR << "sockets::shutdownWrite fd=" << sockfd;
  }
}

int getSocketError(int sockfd) {
  int optval = 0;
  socklen_t optlen = static_cast<socklen_t>(sizeof optval);
  if (::getsockopt(sockfd, SOL_SOCKET, SO_ERROR, &optval, &optlen) < 0) return errno;
  return optval;
}

struct sockaddr_in6 getLocalAddr(int sockfd) {
  struct sockaddr_in6 addr {};
  socklen_t addrlen = static_cast<socklen_t>(sizeof addr);
  if (::getsockname(sockfd, reinterpret_cast<struct sockaddr*>(&addr), &addrlen) < 0) {
    LOG_SYSERR << "sockets::getLocalAddr fd=" << sockfd;
  }
  return addr;
}

struct sockaddr_in6 getPeerAddr(int sockfd) {
  struct sockaddr_in6 addr {};
  socklen_t addrlen = static_cast<socklen_t>(sizeof addr);
  if (::getpeername(sockfd, reinterpret_cast<struct sockaddr*>(&addr), &addrlen) < 0) {
    LOG_SYSERR << "sockets::getPeerAddr fd=" << sockfd;
  }
  return addr;
}

bool isSelfConnect(int sockfd) {
  struct sockaddr_in6 local = getLocalAddr(sockfd);
  struct sockaddr_in6 peer = getPeerAddr(sockfd);
  if (local.sin6_family == AF_INET) {
    struct sockaddr_in l4, p4;
    std::memcpy(&l4, &local, sizeof l4);
    std::memcpy(&p4, &peer, sizeof p4);
    return l4.sin_port == p4.sin_port && l4.sin_addr.s_addr == p4.sin_addr.s_addr;
  }
  if (local.sin6_family == AF_INET6) {
    return local.sin6_port == peer.sin6_port &&
           std::memcmp(&local.sin6_addr, &peer.sin6_addr, sizeof local.sin6_addr) == 0;
  }
  return false;
}

}  // namespace sockets
}  // namespace net
}  // namespace muon
