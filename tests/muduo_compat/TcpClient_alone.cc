// muduo/net/TcpClient.h alone is enough to use the connections it hands out:
// muduo's TcpClient.h brought in TcpConnection.h, and programs rely on it.
// Compiled into muduo_net_test; nothing here runs.
#include "muduo/net/TcpClient.h"

void useTcpClientConnection(const muduo::net::TcpConnectionPtr& conn) {
  conn->send(muduo::StringPiece("bye"));
  conn->shutdown();
}
