// tls_load: the client side of two TLS server measurements, the same client
// for muon's and Asio's pingpong servers (examples/bench/tls_bench.sh).
//
//   tls_load handshakes CA ADDRESS PORT CONCURRENCY SECONDS
//     CONCURRENCY connections at a time, each closed as soon as its full
//     handshake is done (no session resumption) and replaced by a new one;
//     after SECONDS prints "N handshakes in S s: R per second".
//   tls_load idle CA ADDRESS PORT CONNECTIONS
//     opens CONNECTIONS TLS connections, kIdleConcurrency handshakes at a
//     time (as clients arrive over time, not all in the same instant),
//     prints "CONNECTIONS connections up" once every handshake is done, and
//     keeps them open and idle until SIGTERM or SIGINT.
// TLS 1.3 with AES-128-GCM (PingpongTls.h); the server's certificate must
// chain to CA and name ADDRESS. Exit status 1 if a handshake fails.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpClient.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TlsContext.h"

#include "CommandLine.h"
#include "PingpongTls.h"
#include "StopSignals.h"

using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpClient;
using muon::net::TcpConnectionPtr;
using muon::net::TlsContext;

namespace {

int usage(const char* program, bool help = false) {
  std::fprintf(help ? stdout : stderr,
               "Usage: %s handshakes CA ADDRESS PORT CONCURRENCY SECONDS\n"
               "       %s idle CA ADDRESS PORT CONNECTIONS\n",
               program, program);
  return help ? 0 : 2;
}

// Handshakes in flight at once while idle connections are opened.
constexpr int kIdleConcurrency = 32;

// One TcpClient per connection, all in the main loop. With `reconnect`,
// each connection closes once up and its client connects again (a stream of
// full handshakes); without, connections stay open.
class Load {
 public:
  Load(EventLoop* loop, const InetAddress& server, std::shared_ptr<TlsContext> tls, bool reconnect)
      : loop_(loop), server_(server), tls_(std::move(tls)), reconnect_(reconnect) {}

  // Opens n connections, `concurrency` handshakes at a time.
  void open(int n, int concurrency) {
    toOpen_ = n;
    for (int i = 0; i < concurrency && i < n; ++i) openOne();
  }
  long up() const { return up_; }
  bool failed() const { return failed_; }
  void stop() {
    for (auto& c : clients_) c->stop();
  }

 private:
  void openOne() {
    const std::string name = "load" + std::to_string(clients_.size());
    auto client = std::make_unique<TcpClient>(loop_, server_, name);
    client->setTransportLayer(tls_);
    client->setConnectionCallback([this](const TcpConnectionPtr& conn) {
      if (!conn->connected()) return;
      ++up_;
      if (reconnect_) {
        conn->forceClose();
      } else if (static_cast<int>(clients_.size()) < toOpen_) {
        openOne();
      }
    });
    if (reconnect_) client->enableRetry();
    client->setRetryDelayMs(1, 1);
    client->setHandshakeFailureCallback([this](const TcpConnectionPtr&, const std::string& why) {
      std::fprintf(stderr, "tls_load: TLS handshake failed: %s\n", why.c_str());
      failed_ = true;
      loop_->quit();
    });
    client->connect();
    clients_.push_back(std::move(client));
  }

  EventLoop* const loop_;
  const InetAddress server_;
  const std::shared_ptr<TlsContext> tls_;
  const bool reconnect_;
  std::vector<std::unique_ptr<TcpClient>> clients_;
  int toOpen_ = 0;
  long up_ = 0;
  bool failed_ = false;
};

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  if (muon::examples::helpRequested(argc, argv)) return usage(argv[0], true);
  const char* program = argv[0];
  if (argc < 6) return usage(program);
  const std::string mode = argv[1];
  long port = 0, count = 0;
  double seconds = 0;
  InetAddress server;
  if ((mode != "handshakes" || argc != 7) && (mode != "idle" || argc != 6)) return usage(program);
  if (!muon::examples::parseInt(argv[4], 1, 65535, &port) ||
      !muon::examples::parseInt(argv[5], 1, 1000000, &count) ||
      (mode == "handshakes" && !muon::examples::parseNumber(argv[6], 0.01, 86400, &seconds)) ||
      !InetAddress::parse(muon::examples::joinHostPort(argv[3], argv[4]), &server)) {
    return usage(program);
  }
  muon::examples::raiseFdLimit();
  muon::Logger::setLogLevel(muon::Logger::ERROR);

  muon::net::TlsClientOptions options;
  options.caFile = argv[2];
  options.minVersion = muon::net::TlsVersion::kTls13;
  options.cipherSuites = muon::examples::kPingpongCipher;
  options.sessionResumption = false;  // every handshake a full one
  std::string error;
  std::shared_ptr<TlsContext> tls = TlsContext::newClient(options, &error);
  if (!tls) {
    std::fprintf(stderr, "%s: %s\n", program, error.c_str());
    return 1;
  }

  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "tls_load");
  Load load(&loop, server, tls, mode == "handshakes");
  const auto start = std::chrono::steady_clock::now();
  load.open(static_cast<int>(count), mode == "handshakes" ? static_cast<int>(count) : kIdleConcurrency);
  if (mode == "handshakes") {
    loop.runAfter(seconds, [&] { loop.quit(); });
    loop.loop();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    load.stop();
    std::printf("%ld handshakes in %.2f s: %.0f per second\n", load.up(), elapsed,
                static_cast<double>(load.up()) / elapsed);
  } else {
    // Reports once all are up; then idles until SIGTERM or SIGINT.
    bool said = false;
    loop.runEvery(0.05, [&] {
      if (!said && load.up() == count) {
        said = true;
        std::printf("%ld connections up\n", count);
        std::fflush(stdout);
      }
    });
    loop.loop();
  }
  return load.failed() ? 1 : 0;
}
