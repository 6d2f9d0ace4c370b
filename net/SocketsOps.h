// sockets::: thin wrappers over the socket system calls. Internal header.
// Thread-safe (they are system calls). Functions ending in OrDie abort with
// errno's text on failure; the others return the error (-1 and errno).
#pragma once

#include <arpa/inet.h>
#include <sys/types.h>

#include <cstddef>

namespace muon {
namespace net {

class InetAddress;

namespace sockets {

// A non-blocking, close-on-exec TCP socket.
int createNonblockingOrDie(sa_family_t family);
int createNonblocking(sa_family_t family);  // -1 and errno on failure
int connect(int sockfd, const struct sockaddr* addr, socklen_t len);
// 0 or errno.
int bind(int sockfd, const InetAddress& addr);
int listen(int sockfd);
// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC; EINTR retried. -1 and errno on failure.
int accept(int sockfd, struct sockaddr_in6* addr);
ssize_t read(int sockfd, void* buf, size_t count);
// send(2) with MSG_NOSIGNAL, so a peer that is gone gives EPIPE, never
// SIGPIPE; the process's signal disposition is left alone. EINTR retried.
ssize_t write(int sockfd, const void* buf, size_t count);
void close(int sockfd);
void shutdownWrite(int sockfd);

// SO_ERROR of the socket (the outcome of a non-blocking connect).
int getSocketError(int sockfd);
struct sockaddr_in6 getLocalAddr(int sockfd);
struct sockaddr_in6 getPeerAddr(int sockfd);
// A TCP "simultaneous open" of a port with itself (possible when connecting
// to a closed port inside the ephemeral range).
bool isSelfConnect(int sockfd);

}  // namespace sockets
}  // namespace net
}  // namespace muon
