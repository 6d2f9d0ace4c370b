#include "muon/net/internal/Socket.h"

#include <errno.h>
#include <sys/socket.h>

#include <cstdio>

#include "muon/base/Logging.h"
#include "muon/net/InetAddress.h"
#include "muon/net/internal/SocketsOps.h"

namespace muon {
namespace net {

Socket::~Socket() { sockets::close(sockfd_); }

void Socket::bindAddress(const InetAddress& addr) {
  int err = sockets::bind(sockfd_, addr);
  if (err != 0) {
    errno = err;
    LOG_SYSFATAL << "Socket::bindAddress " << addr.toIpPort() << " fd=" << sockfd_;
  }
}

void Socket::listen() {
  int err = sockets::listen(sockfd_);
  if (err != 0) {
    errno = err;
    LOG_SYSFATAL << "Socket::listen fd=" << sockfd_;
  }
}

int Socket::accept(InetAddress* peeraddr) {
  struct sockaddr_in6 addr {};
  int connfd = sockets::accept(sockfd_, &addr);
  if (connfd >= 0) peeraddr->setSockAddrInet6(addr);
  return connfd;
}

void Socket::shutdownWrite() { sockets::shutdownWrite(sockfd_); }

void Socket::shutdownBoth() {
  if (::shutdown(sockfd_, SHUT_RDWR) < 0 && errno != ENOTCONN) {
    LOG_SYSERR << "Socket::shutdownBoth fd=" << sockfd_;
  }
}

namespace {
bool setBoolOption(int fd, int level, int name, bool on, const char* what) {
  int optval = on ? 1 : 0;
  if (::setsockopt(fd, level, name, &optval, static_cast<socklen_t>(sizeof optval)) < 0) {
    LOG_SYSERR << "setsockopt " << what << " fd=" << fd;
    return false;
  }
  return true;
}
}  // namespace

bool Socket::setTcpNoDelay(bool on) { return setBoolOption(sockfd_, IPPROTO_TCP, TCP_NODELAY, on, "TCP_NODELAY"); }
bool Socket::setTcpQuickAck() { return setBoolOption(sockfd_, IPPROTO_TCP, TCP_QUICKACK, true, "TCP_QUICKACK"); }
bool Socket::setReuseAddr(bool on) { return setBoolOption(sockfd_, SOL_SOCKET, SO_REUSEADDR, on, "SO_REUSEADDR"); }
bool Socket::setReusePort(bool on) { return setBoolOption(sockfd_, SOL_SOCKET, SO_REUSEPORT, on, "SO_REUSEPORT"); }
bool Socket::setKeepAlive(bool on) { return setBoolOption(sockfd_, SOL_SOCKET, SO_KEEPALIVE, on, "SO_KEEPALIVE"); }

bool Socket::getTcpInfo(struct tcp_info* info) const {
  socklen_t len = static_cast<socklen_t>(sizeof *info);
  return ::getsockopt(sockfd_, SOL_TCP, TCP_INFO, info, &len) == 0;
}

std::string Socket::getTcpInfoString() const {
  struct tcp_info info {};
  if (!getTcpInfo(&info)) return std::string();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "unrecovered=%u rto=%u ato=%u snd_mss=%u rcv_mss=%u lost=%u retrans=%u "
                "rtt=%u rttvar=%u ssthresh=%u cwnd=%u total_retrans=%u",
                info.tcpi_retransmits, info.tcpi_rto, info.tcpi_ato, info.tcpi_snd_mss,
                info.tcpi_rcv_mss, info.tcpi_lost, info.tcpi_retrans, info.tcpi_rtt,
                info.tcpi_rttvar, info.tcpi_snd_ssthresh, info.tcpi_snd_cwnd,
                info.tcpi_total_retrans);
  return buf;
}

}  // namespace net
}  // namespace muon
