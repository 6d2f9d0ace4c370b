// tls_echo_server CERT KEY PORT [THREADS]: echo_server over TLS.
//
// The whole difference from a plain TCP server is the TlsContext made from
// a certificate and its key, and the one call that sets it on the server
// (setTransportLayer); the callbacks see plaintext as before. Try it with
//   openssl s_client -connect 127.0.0.1:PORT -CAfile ca.pem
// SIGINT and SIGTERM stop it cleanly.
#include <cstdio>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"
#include "muon/net/TlsContext.h"

#include "CommandLine.h"
#include "StopSignals.h"

using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;
using muon::net::TlsContext;
using muon::net::TlsServerOptions;

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, threads = 0;
  if (help || argc < 4 || argc > 5 || !muon::examples::parseInt(argv[3], 0, 65535, &port) ||
      (argc == 5 && !muon::examples::parseInt(argv[4], 0, 256, &threads))) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s CERT KEY PORT [THREADS]\n"
                 "  echoes every byte back over TLS; CERT is the PEM certificate chain, KEY its\n"
                 "  private key; PORT 0 picks a free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  TlsServerOptions options;
  options.certificateChainFile = argv[1];
  options.privateKeyFile = argv[2];
  std::string error;
  std::shared_ptr<TlsContext> tls = TlsContext::newServer(options, &error);
  if (!tls) {
    std::fprintf(stderr, "tls_echo_server: %s\n", error.c_str());
    return 1;
  }

  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "tls_echo_server");
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "TlsEchoServer");
  server.setTransportLayer(tls);  // the one line that encrypts
  server.setConnectionCallback([](const TcpConnectionPtr& conn) {
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN");
    if (conn->connected()) {
      LOG_INFO << conn->security()->protocol << " " << conn->security()->cipher
               << (conn->security()->resumed ? " resumed" : "");
    }
  });
  // A refused peer (no TLS, a certificate problem, a stalled handshake).
  server.setHandshakeFailureCallback([](const TcpConnectionPtr&, const std::string&) {});
  server.setMessageCallback([](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
    conn->send(buf);
  });
  server.setThreadNum(static_cast<int>(threads));
  server.start();
  LOG_INFO << "tls_echo_server listening on " << server.listenAddress().toIpPort();
  loop.loop();
}
