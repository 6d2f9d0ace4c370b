// chat_server PORT: the chat room of the book's §7.3, in one loop. Every
// message (LengthHeaderCodec framing) goes to every connected client, the
// sender included, in the order the server received them.
//
// One thread does everything, so the set of connections needs no lock;
// chat_server_threaded is the same room spread over several loops.
#include <cstdio>
#include <set>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "LengthHeaderCodec.h"
#include "StopSignals.h"

using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0;
  if (help || argc != 2 || !muon::examples::parseInt(argv[1], 0, 65535, &port)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT\n"
                 "  relays each length-prefixed message to every client; PORT 0 picks a\n"
                 "  free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "chat_server");
  std::set<TcpConnectionPtr> connections;  // the loop's thread only
  chat::LengthHeaderCodec codec([&connections](const TcpConnectionPtr&, const std::string& message,
                                               muon::Timestamp) {
    for (const TcpConnectionPtr& conn : connections) chat::LengthHeaderCodec::send(conn, message);
  });
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "ChatServer");
  server.setConnectionCallback([&connections](const TcpConnectionPtr& conn) {
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN");
    if (conn->connected()) {
      connections.insert(conn);
    } else {
      connections.erase(conn);
    }
  });
  server.setMessageCallback([&codec](const TcpConnectionPtr& conn, muon::net::Buffer* buf,
                                     muon::Timestamp time) { codec.onMessage(conn, buf, time); });
  server.start();
  LOG_INFO << "chat_server listening on " << server.listenAddress().toIpPort();
  loop.loop();
}
