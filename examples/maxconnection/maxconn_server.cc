// maxconn_server PORT MAX: an echo server that serves at most MAX clients
// at once (the book's §7.7). The (MAX+1)th connection is accepted and
// closed at once: the client sees EOF before any data.
//
// Accepting and closing, rather than leaving the connection in the listen
// backlog, tells the client now instead of letting it wait, and keeps the
// acceptor's readiness from firing again and again.
#include <cstdio>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "StopSignals.h"

using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, maxConnections = 0;
  if (help || argc != 3 || !muon::examples::parseInt(argv[1], 0, 65535, &port) ||
      !muon::examples::parseInt(argv[2], 1, 1000000, &maxConnections)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT MAX\n"
                 "  echoes for at most MAX (1..1000000) clients at once and closes any more;\n"
                 "  PORT 0 picks a free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  muon::examples::raiseFdLimit();
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "maxconn_server");
  long numConnected = 0;  // the loop's thread only: the server has no I/O threads
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "MaxConnServer");
  server.setConnectionCallback([&numConnected, maxConnections](const TcpConnectionPtr& conn) {
    // Refused connections count too until they are gone: their sockets are
    // still open.
    numConnected += conn->connected() ? 1 : -1;
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN")
             << ", " << numConnected << " connected";
    if (conn->connected() && numConnected > maxConnections) {
      LOG_WARN << conn->peerAddress().toIpPort() << " refused: over " << maxConnections
               << " connections";
      conn->forceClose();
    }
  });
  server.setMessageCallback(
      [](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) { conn->send(buf); });
  server.start();
  LOG_INFO << "maxconn_server listening on " << server.listenAddress().toIpPort() << ", at most "
           << maxConnections << " connections";
  loop.loop();
}
