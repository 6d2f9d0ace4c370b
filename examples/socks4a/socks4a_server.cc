// socks4a_server PORT [HIGH_WATER_MARK_KIB] [CONNECT_TIMEOUT_SECONDS]: a
// SOCKS4a proxy (the book's §7.13). A client sends one CONNECT request; the
// proxy connects to the destination it names, answers 0x5A (granted) or
// 0x5B (refused: not CONNECT, a name that does not resolve, or no
// connection within the timeout, default 5 s) and then relays bytes both
// ways with flow control (see Tunnel.h). A refused client is half-closed
// and read until it leaves, whatever it still sends dropped.
//
// The request: VN=4, CD=1, DSTPORT (2 bytes), DSTIP (4 bytes), USERID,
// NUL. SOCKS4a: a DSTIP of 0.0.0.x (x != 0) is followed by a host name and
// NUL. Names are resolved with a blocking getaddrinfo in the loop -- a
// shortcut the book takes too; a busy proxy would resolve elsewhere.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <typeinfo>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "StopSignals.h"
#include "Socks4aRequest.h"
#include "Tunnel.h"

using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;
using socks4a::Tunnel;
using TunnelPtr = std::shared_ptr<Tunnel>;

namespace {

constexpr char kGranted = 0x5A;
constexpr char kRejected = 0x5B;

void reply(const TcpConnectionPtr& conn, char status) {
  const char response[8] = {0, status, 0, 0, 0, 0, 0, 0};
  conn->send(response, sizeof response);
}

// The context of a refused connection.
struct Refused {};

void reject(const TcpConnectionPtr& conn, const char* why) {
  LOG_WARN << conn->peerAddress().toIpPort() << " rejected: " << why;
  reply(conn, kRejected);
  conn->setContext(Refused{});  // drops the tunnel, if any
  // Reading may have been stopped while connecting; without it the
  // client's close would never be seen.
  if (!conn->isReading()) conn->startRead();
  conn->shutdown();
}

// The request at the front of buf: false while it is incomplete; once
// complete, consumed, with *destination set (resolved) or *error.
bool parseRequest(Buffer* buf, InetAddress* destination, const char** error) {
  socks4a::Request request;
  size_t consumed = 0;
  socks4a::Parse result =
      socks4a::parseRequest(buf->peek(), buf->readableBytes(), &request, &consumed, error);
  if (result == socks4a::Parse::kIncomplete) return false;
  buf->retrieve(consumed);
  if (result == socks4a::Parse::kError) return true;
  struct sockaddr_in addr {};
  addr.sin_family = AF_INET;
  addr.sin_port = request.portNet;
  addr.sin_addr.s_addr = request.ipNet;
  *destination = InetAddress(addr);
  if (request.socks4a && !InetAddress::resolve(request.host, destination)) {
    *error = "name does not resolve";
  }
  return true;
}

void onRequest(const TcpConnectionPtr& conn, Buffer* buf, size_t highWaterMark, double connectTimeout) {
  InetAddress destination;
  const char* error = nullptr;
  if (!parseRequest(buf, &destination, &error)) return;
  if (error != nullptr) {
    buf->retrieveAll();
    reject(conn, error);
    return;
  }
  LOG_INFO << conn->peerAddress().toIpPort() << " -> " << destination.toIpPort();
  conn->stopRead();  // until upstream is up; what came already waits in buf
  auto tunnel = std::make_shared<Tunnel>(conn, destination, highWaterMark);
  conn->setContext(tunnel);
  tunnel->connect(connectTimeout, [weakConn = std::weak_ptr<muon::net::TcpConnection>(conn)](bool ok) {
    TcpConnectionPtr c = weakConn.lock();
    if (!c) return;
    if (ok) {
      reply(c, kGranted);
      c->startRead();
    } else {
      reject(c, "no connection to the destination");
    }
  });
}

TunnelPtr tunnelOf(const TcpConnectionPtr& conn) {
  const auto* tunnel = std::any_cast<TunnelPtr>(&conn->getContext());
  return tunnel != nullptr ? *tunnel : TunnelPtr();
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, highWaterKiB = 1024;
  double connectTimeout = 5;
  if (help || argc < 2 || argc > 4 || !muon::examples::parseInt(argv[1], 0, 65535, &port) ||
      (argc >= 3 && !muon::examples::parseInt(argv[2], 16, 1024 * 1024, &highWaterKiB)) ||
      (argc == 4 && !muon::examples::parseNumber(argv[3], 0.01, 3600, &connectTimeout))) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT [HIGH_WATER_MARK_KIB] [CONNECT_TIMEOUT_SECONDS]\n"
                 "  a SOCKS4a proxy buffering about HIGH_WATER_MARK_KIB (16..1048576, default\n"
                 "  1024) per direction of each tunnel, refusing a destination not connected\n"
                 "  within CONNECT_TIMEOUT_SECONDS (default 5); PORT 0 picks a free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  const size_t highWaterMark = static_cast<size_t>(highWaterKiB) * 1024;
  muon::examples::raiseFdLimit();
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "socks4a_server");
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "Socks4a");
  server.setConnectionCallback([](const TcpConnectionPtr& conn) {
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN");
    if (conn->connected()) {
      conn->setTcpNoDelay(true);
    } else if (TunnelPtr tunnel = tunnelOf(conn)) {
      tunnel->onDownstreamDown();
      conn->setContext(std::any());
    }
  });
  server.setMessageCallback(
      [highWaterMark, connectTimeout](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
        if (conn->getContext().type() == typeid(Refused)) {
          buf->retrieveAll();
        } else if (TunnelPtr tunnel = tunnelOf(conn)) {
          tunnel->onDownstreamMessage(buf);
        } else {
          onRequest(conn, buf, highWaterMark, connectTimeout);
        }
      });
  server.setWriteCompleteCallback([](const TcpConnectionPtr& conn) {
    if (TunnelPtr tunnel = tunnelOf(conn)) tunnel->onDownstreamWriteComplete();
  });
  server.start();
  LOG_INFO << "socks4a_server listening on " << server.listenAddress().toIpPort();
  loop.loop();
}
