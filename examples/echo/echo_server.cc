// echo_server PORT [THREADS]: sends back whatever it receives.
//
// Memory per connection stays bounded even against a client that sends
// without reading: when a connection's output passes kHighWaterMark the
// server stops reading from it, and resumes once the output is written out.
//
// SIGINT and SIGTERM stop it cleanly: they arrive through a signalfd watched
// by the loop like any other fd, so the loop quits, connections are closed
// and every log line is written before exit.
#include <cstdio>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "StopSignals.h"

using muon::examples::parseInt;
using muon::examples::raiseFdLimit;
using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

constexpr size_t kHighWaterMark = 4 * 1024 * 1024;

void onConnection(const TcpConnectionPtr& conn) {
  // Every line this callback logs (here and in what it calls) carries the
  // connection's name: a LogContext lives for the callback, on its thread.
  muon::LogContext context{{"conn", conn->name()}};
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
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, threads = 0;
  if (help || argc < 2 || argc > 3 || !parseInt(argv[1], 0, 65535, &port) ||
      (argc == 3 && !parseInt(argv[2], 0, 256, &threads))) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT [THREADS]\n"
                 "  echoes every byte back; PORT 0 picks a free port (printed); THREADS 0..256\n"
                 "  I/O threads besides the accepting one (default 0)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  raiseFdLimit();
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "echo_server");  // before any thread starts
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "EchoServer");
  server.setConnectionCallback(onConnection);
  server.setMessageCallback(onMessage);
  server.setWriteCompleteCallback(onWriteComplete);
  server.setThreadNum(static_cast<int>(threads));
  server.start();
  LOG_INFO << "echo_server listening on " << server.listenAddress().toIpPort() << " with "
           << threads << " I/O threads";
  loop.loop();
}
