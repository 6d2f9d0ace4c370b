// simple_server PORT: the five simple TCP services of the book's §7.1 in
// one process and one loop, each on its own port.
//
//   discard (RFC 863)  reads and drops everything; logs the byte count at close
//   daytime (RFC 867)  sends the UTC time as text, then closes
//   time    (RFC 868)  sends the seconds since 1970 as a 4-byte big-endian
//                      integer (the book's variant: Unix epoch, not 1900)
//   echo    (RFC 862)  sends back whatever it receives
//   chargen (RFC 864)  sends the rotating 72-column character pattern for as
//                      long as the peer reads it; ignores what it receives
//
// PORT 0 gives each service a free port; otherwise they take PORT .. PORT+4
// in the order above. Each logs "<service> listening on ADDRESS:PORT".
#include <any>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "StopSignals.h"

using muon::Timestamp;
using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

void logConnection(const char* service, const TcpConnectionPtr& conn) {
  LOG_INFO << service << " " << conn->peerAddress().toIpPort() << " is "
           << (conn->connected() ? "UP" : "DOWN");
}

void setUpDiscard(TcpServer* server) {
  // Bytes dropped on each connection, kept in its context.
  server->setConnectionCallback([](const TcpConnectionPtr& conn) {
    logConnection("discard", conn);
    if (conn->connected()) {
      conn->setContext(size_t{0});
    } else {
      LOG_INFO << "discard " << conn->peerAddress().toIpPort() << " discarded "
               << std::any_cast<size_t>(conn->getContext()) << " bytes";
    }
  });
  server->setMessageCallback([](const TcpConnectionPtr& conn, Buffer* buf, Timestamp) {
    *std::any_cast<size_t>(conn->getMutableContext()) += buf->readableBytes();
    buf->retrieveAll();
  });
}

void setUpDaytime(TcpServer* server) {
  server->setConnectionCallback([](const TcpConnectionPtr& conn) {
    logConnection("daytime", conn);
    if (conn->connected()) {
      conn->send(Timestamp::now().toFormattedString(false) + " UTC\n");
      conn->shutdown();
    }
  });
}

void setUpTime(TcpServer* server) {
  server->setConnectionCallback([](const TcpConnectionPtr& conn) {
    logConnection("time", conn);
    if (conn->connected()) {
      Buffer buf;
      buf.appendInt32(static_cast<int32_t>(Timestamp::now().secondsSinceEpoch()));
      conn->send(&buf);
      conn->shutdown();
    }
  });
}

void setUpEcho(TcpServer* server) {
  server->setConnectionCallback([](const TcpConnectionPtr& conn) { logConnection("echo", conn); });
  server->setMessageCallback(
      [](const TcpConnectionPtr& conn, Buffer* buf, Timestamp) { conn->send(buf); });
}

// 95 printable characters, each line starting one further along the ring:
// many lines, so one send() keeps the socket busy for a while.
std::string chargenBlock() {
  std::string ring;
  for (char c = 33; c < 127; ++c) ring += c;
  ring += ' ';
  std::string block;
  for (size_t line = 0; line < ring.size(); ++line) {
    for (size_t i = 0; i < 72; ++i) block += ring[(line + i) % ring.size()];
    block += "\r\n";
  }
  return block;
}

void setUpChargen(TcpServer* server) {
  auto block = std::make_shared<const std::string>(chargenBlock());
  // The next block goes out only when the last one is written: the output
  // buffer never holds more than one block, however slow the reader.
  server->setConnectionCallback([block](const TcpConnectionPtr& conn) {
    logConnection("chargen", conn);
    if (conn->connected()) {
      conn->setTcpNoDelay(true);
      conn->send(*block);
    }
  });
  server->setMessageCallback([](const TcpConnectionPtr&, Buffer* buf, Timestamp) { buf->retrieveAll(); });
  server->setWriteCompleteCallback([block](const TcpConnectionPtr& conn) { conn->send(*block); });
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0;
  if (help || argc != 2 || !muon::examples::parseInt(argv[1], 0, 65535 - 4, &port)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT\n"
                 "  discard, daytime, time, echo and chargen on PORT .. PORT+4;\n"
                 "  PORT 0 gives each a free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "simple_server");
  struct Service {
    const char* name;
    void (*setUp)(TcpServer*);
  };
  const Service services[] = {{"discard", setUpDiscard}, {"daytime", setUpDaytime}, {"time", setUpTime},
                              {"echo", setUpEcho},       {"chargen", setUpChargen}};
  std::vector<std::unique_ptr<TcpServer>> servers;
  for (const Service& service : services) {
    const auto servicePort = static_cast<uint16_t>(port == 0 ? 0 : port + static_cast<long>(servers.size()));
    servers.push_back(std::make_unique<TcpServer>(&loop, InetAddress(servicePort), service.name));
    service.setUp(servers.back().get());
    servers.back()->start();
    LOG_INFO << service.name << " listening on " << servers.back()->listenAddress().toIpPort();
  }
  loop.loop();
}
