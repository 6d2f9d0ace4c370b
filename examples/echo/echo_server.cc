// echo_server PORT [THREADS]: sends back whatever it receives.
//
// Memory per connection stays bounded even against a client that sends
// without reading: when a connection's output passes kHighWaterMark the
// server stops reading from it, and resumes once the output is written out.
#include <cstdio>
#include <cstdlib>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

constexpr size_t kHighWaterMark = 4 * 1024 * 1024;

void onConnection(const TcpConnectionPtr& conn) {
  LOG_INFO << conn->peerAddress().toIpPort() << " -> " << conn->localAddress().toIpPort() << " is "
           << (conn->connected() ? "UP" : "DOWN");
  if (conn->connected()) {
    conn->setTcpNoDelay(true);
    conn->setHighWaterMarkCallback([](const TcpConnectionPtr& c, size_t) { c->stopRead(); },
                                   kHighWaterMark);
  }
}

void onMessage(const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) { conn->send(buf); }

void onWriteComplete(const TcpConnectionPtr& conn) {
  if (!conn->isReading()) conn->startRead();
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 2) {
    std::fprintf(stderr, "Usage: %s PORT [THREADS]\n", argv[0]);
    return 2;
  }
  long port = std::strtol(argv[1], nullptr, 10);
  long threads = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 0;
  if (port < 0 || port > 65535 || threads < 0 || threads > 256) {
    std::fprintf(stderr, "%s: bad PORT or THREADS\n", argv[0]);
    return 2;
  }
  EventLoop loop;
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "EchoServer");
  server.setConnectionCallback(onConnection);
  server.setMessageCallback(onMessage);
  server.setWriteCompleteCallback(onWriteComplete);
  server.setThreadNum(static_cast<int>(threads));
  server.start();
  LOG_INFO << "echo_server listening on " << server.listenAddress().toIpPort() << " with "
           << threads << " I/O threads";
  muon::Logger::flush();  // the port, now, even when stdout is a pipe
  loop.loop();
}
