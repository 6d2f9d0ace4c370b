// idle_server PORT [IDLE_SECONDS]: an echo server that closes connections
// silent for IDLE_SECONDS (default 8), with the timing wheel of the book's
// §7.10.
//
// The wheel is a ring of kTicks + 1 buckets; a tick (IDLE_SECONDS / kTicks)
// drops the oldest bucket and starts a new one. Each connection has one
// Entry, shared by the buckets it was put in (on connect and on every
// message, into the newest bucket); when the last bucket holding it is
// dropped, the Entry dies and closes the connection. So no per-connection
// timer is ever set or cancelled, and a connection is closed between
// IDLE_SECONDS and IDLE_SECONDS + one tick after its last message -- never
// before (kTicks + 1 buckets, not kTicks, for that).
#include <any>
#include <cstdio>
#include <deque>
#include <memory>
#include <unordered_set>

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
using muon::net::TcpConnection;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

constexpr int kTicks = 8;

// Closes its connection when the wheel lets go of it.
class Entry {
 public:
  explicit Entry(const TcpConnectionPtr& conn) : conn_(conn) {}
  ~Entry() {
    if (TcpConnectionPtr conn = conn_.lock()) {
      LOG_INFO << conn->peerAddress().toIpPort() << " idle, closing";
      // Not shutdown(): a peer that stays silent may never close its side.
      conn->forceClose();
    }
  }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

 private:
  const std::weak_ptr<TcpConnection> conn_;
};

using EntryPtr = std::shared_ptr<Entry>;
using Bucket = std::unordered_set<EntryPtr>;

// The wheel and the connections' entries; the loop's thread only (one loop).
class TimingWheel {
 public:
  TimingWheel() : buckets_(kTicks + 1) {}

  void tick() {
    buckets_.pop_front();  // may close connections
    buckets_.emplace_back();
  }
  void onConnection(const TcpConnectionPtr& conn) {
    if (conn->connected()) {
      auto entry = std::make_shared<Entry>(conn);
      buckets_.back().insert(entry);
      conn->setContext(std::weak_ptr<Entry>(entry));
    }
  }
  void onMessage(const TcpConnectionPtr& conn) {
    auto entry = std::any_cast<const std::weak_ptr<Entry>&>(conn->getContext()).lock();
    if (entry) buckets_.back().insert(entry);
  }

 private:
  std::deque<Bucket> buckets_;  // front: the oldest
};

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0;
  double idleSeconds = 8;
  if (help || argc < 2 || argc > 3 || !muon::examples::parseInt(argv[1], 0, 65535, &port) ||
      (argc == 3 && !muon::examples::parseNumber(argv[2], 0.008, 86400, &idleSeconds))) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT [IDLE_SECONDS]\n"
                 "  echoes, and closes a connection silent for IDLE_SECONDS (default 8,\n"
                 "  fractions allowed); PORT 0 picks a free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "idle_server");
  TimingWheel wheel;
  loop.runEvery(idleSeconds / kTicks, [&wheel] { wheel.tick(); });
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "IdleServer");
  server.setConnectionCallback([&wheel](const TcpConnectionPtr& conn) {
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN");
    wheel.onConnection(conn);
  });
  server.setMessageCallback([&wheel](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
    conn->send(buf);
    wheel.onMessage(conn);
  });
  server.start();
  LOG_INFO << "idle_server listening on " << server.listenAddress().toIpPort() << ", idle timeout "
           << idleSeconds << " s";
  loop.loop();
}
