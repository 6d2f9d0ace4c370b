// Pingpong server: echoes back every byte it receives.
//
//   pingpong_server [--tls CERT KEY] ADDRESS PORT THREADS
//
// With --tls, every connection is TLS 1.3 (AES-128-GCM) with the PEM
// certificate chain CERT and its key KEY (PingpongTls.h).
// THREADS 1 serves everything in the main loop; THREADS n > 1 gives the
// TcpServer n I/O loops (the main loop then only accepts). PORT 0 binds an
// ephemeral port; the first line printed is "listening on ADDRESS:PORT".
// Compare with asio_pingpong_server.cc, its Boost.Asio twin.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "PingpongTls.h"

using muon::Logger;
using muon::examples::joinHostPort;
using muon::examples::parseInt;
using muon::examples::raiseFdLimit;
using muon::Timestamp;
using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

void onConnection(const TcpConnectionPtr& conn) {
  if (conn->connected()) conn->setTcpNoDelay(true);
}

void onMessage(const TcpConnectionPtr& conn, Buffer* buf, Timestamp) {
  conn->send(buf);  // sends and empties *buf
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  const char* program = argv[0];
  std::shared_ptr<muon::net::TlsContext> tls;
  if (argc >= 4 && std::string(argv[1]) == "--tls") {
    tls = muon::examples::pingpongServerTls(program, argv[2], argv[3]);
    if (!tls) return 1;
    argc -= 3;
    argv += 3;
  }
  long port = 0, threads = 0;
  InetAddress listenAddr;
  if (help || argc != 4 || !parseInt(argv[2], 0, 65535, &port) ||
      !parseInt(argv[3], 1, 256, &threads) ||
      !InetAddress::parse(joinHostPort(argv[1], argv[2]), &listenAddr)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s [--tls CERT KEY] ADDRESS PORT THREADS\n"
                 "  echoes every byte back; PORT 0 picks a free port; THREADS 1..256\n",
                 program);
    return help ? 0 : 2;
  }
  raiseFdLimit();
  // No line per connection (TcpServer logs them at INFO): 10,000 sessions
  // would be 10,000 lines to stdout inside the measurement.
  Logger::setLogLevel(Logger::WARN);

  EventLoop loop;
  TcpServer server(&loop, listenAddr, "PingPong");
  server.setConnectionCallback(onConnection);
  server.setMessageCallback(onMessage);
  if (tls) server.setTransportLayer(tls);
  if (threads > 1) server.setThreadNum(static_cast<int>(threads));
  server.start();
  std::printf("listening on %s\n", server.listenAddress().toIpPort().c_str());
  std::fflush(stdout);
  loop.loop();
}
