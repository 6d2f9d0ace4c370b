// The net half from an installed muon: a server on a free loopback port, a
// client that connects to it, one message each way, then quit.
#include <cstdio>

#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpClient.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

using namespace muon::net;

int main() {
  EventLoop loop;
  TcpServer server(&loop, InetAddress(0, /*loopbackOnly=*/true), "hello-server");
  server.setMessageCallback([](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
    conn->send(buf);  // echo
  });
  server.start();
  TcpClient client(&loop, server.listenAddress(), "hello-client");
  client.setConnectionCallback([](const TcpConnectionPtr& conn) {
    if (conn->connected()) conn->send("ping");
  });
  client.setMessageCallback([&loop](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) {
    std::printf("echoed: %s\n", buf->retrieveAllAsString().c_str());
    loop.quit();
  });
  client.connect();
  loop.runAfter(10.0, [&loop] { loop.quit(); });  // never hang a test
  loop.loop();
}
