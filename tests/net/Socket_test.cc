// Socket: the options it sets and clears.
#include "muon/net/internal/Socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "muon/net/internal/SocketsOps.h"

using muon::net::Socket;
namespace sockets = muon::net::sockets;

TEST(Socket, OptionsAreSetAndCleared) {
  Socket sock(sockets::createNonblockingOrDie(AF_INET));
  auto get = [&sock](int level, int name) {
    int value = -1;
    socklen_t len = static_cast<socklen_t>(sizeof value);
    EXPECT_EQ(::getsockopt(sock.fd(), level, name, &value, &len), 0);
    return value != 0;
  };
  for (bool on : {true, false}) {
    EXPECT_TRUE(sock.setReuseAddr(on));
    EXPECT_EQ(get(SOL_SOCKET, SO_REUSEADDR), on);
    EXPECT_TRUE(sock.setReusePort(on));
    EXPECT_EQ(get(SOL_SOCKET, SO_REUSEPORT), on);
    EXPECT_TRUE(sock.setKeepAlive(on));
    EXPECT_EQ(get(SOL_SOCKET, SO_KEEPALIVE), on);
    EXPECT_TRUE(sock.setTcpNoDelay(on));
    EXPECT_EQ(get(IPPROTO_TCP, TCP_NODELAY), on);
  }
}
