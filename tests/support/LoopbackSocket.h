// A socket bound to 127.0.0.1 on a port the kernel chose, for tests that
// need a free loopback port or a receiver that a sink can be pointed at.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace muon {
namespace test {

// A socket of `type` (SOCK_DGRAM, SOCK_STREAM) bound to 127.0.0.1:0; its
// port in *port. -1 if there is none to be had.
inline int bindLoopback(int type, uint16_t* port) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  struct sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<struct sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace test
}  // namespace muon
