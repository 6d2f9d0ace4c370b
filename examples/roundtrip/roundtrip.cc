// roundtrip -s PORT | roundtrip HOST PORT [COUNT]: measures the round trip
// and the clock offset between two machines over TCP (the book's §7.9).
//
// Every 0.2 s the client sends two 8-byte integers: its wall-clock time in
// microseconds and 0. The server fills in the second with its own time and
// sends the pair back. When it returns at time t3, the client prints
//   round trip R us, clock offset O us
// with R = t3 - t1 and O = server time - (t1 + t3) / 2: the server's clock
// minus the client's, if the two legs took equally long. On one machine
// |O| <= R / 2.
//
// The client stops after COUNT answers (default: never) or on a signal.
#include <cstdio>
#include <cstring>
#include <memory>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpClient.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "StopSignals.h"

using muon::Timestamp;
using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpClient;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

constexpr size_t kFrameLength = 2 * sizeof(int64_t);
constexpr double kInterval = 0.2;

int usage(const char* program, bool help = false) {
  std::fprintf(help ? stdout : stderr,
               "Usage: %s -s PORT          run the server (PORT 0 picks a free port, printed)\n"
               "       %s HOST PORT [COUNT] measure against it COUNT times (default: until a signal)\n",
               program, program);
  return help ? 0 : 2;
}

void runServer(EventLoop* loop, uint16_t port) {
  TcpServer server(loop, InetAddress(port), "RoundTripServer");
  server.setConnectionCallback([](const TcpConnectionPtr& conn) {
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN");
    if (conn->connected()) conn->setTcpNoDelay(true);
  });
  server.setMessageCallback([](const TcpConnectionPtr& conn, Buffer* buf, Timestamp receiveTime) {
    while (buf->readableBytes() >= kFrameLength) {
      const int64_t clientTime = buf->readInt64();
      buf->readInt64();  // the client's 0
      Buffer reply;
      reply.appendInt64(clientTime);
      reply.appendInt64(receiveTime.microSecondsSinceEpoch());
      conn->send(&reply);
    }
  });
  server.start();
  LOG_INFO << "roundtrip listening on " << server.listenAddress().toIpPort();
  loop->loop();
}

void runClient(EventLoop* loop, const InetAddress& serverAddr, long count) {
  TcpClient client(loop, serverAddr, "RoundTripClient");
  long answers = 0;
  client.setConnectionCallback([loop](const TcpConnectionPtr& conn) {
    if (conn->connected()) {
      conn->setTcpNoDelay(true);
    } else {
      LOG_INFO << "roundtrip: server went away";
      loop->quit();
    }
  });
  client.setMessageCallback([&answers, count, loop](const TcpConnectionPtr&, Buffer* buf, Timestamp receiveTime) {
    while (buf->readableBytes() >= kFrameLength) {
      const int64_t sent = buf->readInt64();
      const int64_t serverTime = buf->readInt64();
      const int64_t received = receiveTime.microSecondsSinceEpoch();
      const int64_t mid = sent + (received - sent) / 2;
      std::printf("round trip %lld us, clock offset %lld us\n", static_cast<long long>(received - sent),
                  static_cast<long long>(serverTime - mid));
      std::fflush(stdout);
      if (++answers == count) loop->quit();
    }
  });
  loop->runEvery(kInterval, [&client] {
    if (TcpConnectionPtr conn = client.connection()) {
      Buffer frame;
      frame.appendInt64(Timestamp::now().microSecondsSinceEpoch());
      frame.appendInt64(0);
      conn->send(&frame);
    }
  });
  client.connect();
  loop->loop();
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  if (muon::examples::helpRequested(argc, argv)) return usage(argv[0], true);
  long port = 0, count = 0;
  const bool server = argc == 3 && std::strcmp(argv[1], "-s") == 0;
  if (server) {
    if (!muon::examples::parseInt(argv[2], 0, 65535, &port)) return usage(argv[0]);
  } else if (argc < 3 || argc > 4 || !muon::examples::parseInt(argv[2], 1, 65535, &port) ||
             (argc == 4 && !muon::examples::parseInt(argv[3], 1, 1000000000, &count))) {
    return usage(argv[0]);
  }
  InetAddress serverAddr;
  if (!server && !InetAddress::parse(muon::examples::joinHostPort(argv[1], argv[2]), &serverAddr)) {
    return usage(argv[0]);
  }
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "roundtrip");
  if (server) {
    runServer(&loop, static_cast<uint16_t>(port));
  } else {
    runClient(&loop, serverAddr, count);
  }
}
