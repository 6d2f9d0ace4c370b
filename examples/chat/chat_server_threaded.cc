// chat_server_threaded PORT THREADS: the chat room of chat_server spread
// over THREADS I/O loops (the book's §7.3 with one loop per thread, its
// fastest multithreaded form).
//
// Each loop keeps the set of its own connections in a thread_local, so no
// lock is shared by the loops. A message received in one loop is queued to
// every loop, which sends it to its own connections. Messages from one
// sender reach every client in the order sent: they leave the sender's loop
// in that order, and each loop runs its queue in order.
#include <cstdio>
#include <memory>
#include <set>
#include <vector>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThreadPool.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "LengthHeaderCodec.h"
#include "StopSignals.h"

using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

// The connections of the calling thread's loop.
thread_local std::set<TcpConnectionPtr> t_connections;

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, threads = 0;
  if (help || argc != 3 || !muon::examples::parseInt(argv[1], 0, 65535, &port) ||
      !muon::examples::parseInt(argv[2], 1, 256, &threads)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT THREADS\n"
                 "  relays each length-prefixed message to every client, with THREADS (1..256)\n"
                 "  I/O loops; PORT 0 picks a free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "chat_server_threaded");
  // Filled in the base loop's thread before any message can arrive; only
  // read afterwards.
  std::vector<EventLoop*> loops;
  chat::LengthHeaderCodec codec([&loops](const TcpConnectionPtr&, const std::string& message,
                                         muon::Timestamp) {
    auto shared = std::make_shared<const std::string>(message);  // one copy for every loop
    for (EventLoop* ioLoop : loops) {
      ioLoop->queueInLoop([shared] {
        for (const TcpConnectionPtr& conn : t_connections) chat::LengthHeaderCodec::send(conn, *shared);
      });
    }
  });
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "ChatServer");
  server.setConnectionCallback([](const TcpConnectionPtr& conn) {
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN");
    if (conn->connected()) {
      t_connections.insert(conn);
    } else {
      t_connections.erase(conn);
    }
  });
  server.setMessageCallback([&codec](const TcpConnectionPtr& conn, muon::net::Buffer* buf,
                                     muon::Timestamp time) { codec.onMessage(conn, buf, time); });
  server.setThreadNum(static_cast<int>(threads));
  server.start();
  loops = server.threadPool()->getAllLoops();
  LOG_INFO << "chat_server_threaded listening on " << server.listenAddress().toIpPort() << " with "
           << threads << " I/O threads";
  loop.loop();
}
