// Socket: owns a socket fd and closes it (RAII). Internal header.
// The methods are system calls: safe from any thread, but a Socket belongs
// to one owner (Acceptor, TcpConnection).
#pragma once

#include <netinet/tcp.h>

#include <string>

namespace muon {
namespace net {

class InetAddress;

class Socket {
 public:
  explicit Socket(int sockfd) : sockfd_(sockfd) {}
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return sockfd_; }

  // Abort on failure with the address and errno: a server that cannot bind
  // or listen on its port cannot do anything useful.
  void bindAddress(const InetAddress& localAddr);
  void listen();
  // A new connected, non-blocking socket, or -1 with errno (EAGAIN when
  // none is pending). *peeraddr is set on success.
  int accept(InetAddress* peeraddr);
  void shutdownWrite();
  void shutdownBoth();  // SHUT_RDWR; ENOTCONN (peer gone) is not an error

  // Options; each logs and returns false if setsockopt fails.
  bool setTcpNoDelay(bool on);     // TCP_NODELAY (Nagle off)
  // TCP_QUICKACK: acknowledge what has arrived at once rather than after the
  // delayed-ACK timer (up to 40 ms on Linux). Not sticky: the kernel may go
  // back to delaying, so a caller sets it after each read it will not answer.
  bool setTcpQuickAck();
  bool setReuseAddr(bool on);      // SO_REUSEADDR
  bool setReusePort(bool on);      // SO_REUSEPORT
  bool setKeepAlive(bool on);      // SO_KEEPALIVE

  bool getTcpInfo(struct tcp_info* info) const;
  std::string getTcpInfoString() const;

 private:
  const int sockfd_;
};

}  // namespace net
}  // namespace muon
