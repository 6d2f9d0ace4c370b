// Pingpong client: SESSIONS connections that bounce a block off the server.
//
//   pingpong_client [--tls CA] ADDRESS PORT THREADS BLOCKSIZE SESSIONS SECONDS
//
// With --tls, sessions are TLS 1.3 (AES-128-GCM) and the server's
// certificate must chain to the PEM file CA and name ADDRESS; a session
// whose handshake fails says why on stderr and counts as failed.
// Sessions are spread round-robin over THREADS I/O loops. Each sends
// BLOCKSIZE bytes once connected and then echoes back whatever it reads.
// After SECONDS every session half-closes (after its queued output), keeps
// reading until the server closes, and the client prints the totals: bytes
// and messages (message callbacks) read, their average size, and bytes read
// per second of the run. Exit status 1 if a session failed to connect or was
// closed early. Compare with asio_pingpong_client.cc, its Boost.Asio twin.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThreadPool.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpClient.h"
#include "muon/net/TcpConnection.h"

#include "CommandLine.h"
#include "PingpongTls.h"

using muon::Logger;
using muon::examples::joinHostPort;
using muon::examples::parseInt;
using muon::examples::parseNumber;
using muon::examples::raiseFdLimit;
using muon::Timestamp;
using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::EventLoopThreadPool;
using muon::net::InetAddress;
using muon::net::TcpClient;
using muon::net::TcpConnectionPtr;

namespace {

class Client;

// One connection. Its TcpClient and all its members belong to one I/O loop
// (loop_); the counters are read by the main thread only after the session
// has reported itself done through Client::sessionDone().
class Session {
 public:
  Session(EventLoop* loop, const InetAddress& serverAddr, const std::string& name, Client* owner,
          const std::shared_ptr<muon::net::TlsContext>& tls);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Both safe from any thread (they run in the session's loop).
  void start();
  void stop();

  int64_t bytesRead() const { return bytesRead_; }
  int64_t messagesRead() const { return messagesRead_; }

 private:
  enum State { kConnecting, kConnected, kStopping, kDone };

  void onConnection(const TcpConnectionPtr& conn);
  void onMessage(const TcpConnectionPtr& conn, Buffer* buf);
  void finish(bool failed);

  EventLoop* const loop_;
  TcpClient client_;
  Client* const owner_;
  State state_ = kConnecting;
  int64_t bytesRead_ = 0;
  int64_t messagesRead_ = 0;
};

class Client {
 public:
  Client(EventLoop* loop, const InetAddress& serverAddr, int threads, size_t blockSize,
         int sessions, const std::shared_ptr<muon::net::TlsContext>& tls)
      : loop_(loop), threadPool_(loop, "pingpong-client"), remaining_(sessions) {
    message_.resize(blockSize);
    for (size_t i = 0; i < blockSize; ++i) message_[i] = static_cast<char>(i % 128);
    threadPool_.setThreadNum(threads);
    threadPool_.start();
    for (int i = 0; i < sessions; ++i) {
      sessions_.push_back(std::make_unique<Session>(
          threadPool_.getNextLoop(), serverAddr, "C" + std::to_string(i), this, tls));
    }
  }

  // Runs the benchmark in the calling thread (loop_'s); returns the exit status.
  int run(double seconds) {
    start_ = std::chrono::steady_clock::now();
    for (auto& s : sessions_) s->start();
    loop_->runAfter(seconds, [this] {
      stop_ = std::chrono::steady_clock::now();
      for (auto& s : sessions_) s->stop();
    });
    loop_->runAfter(seconds + kDrainSeconds, [this] {
      std::fprintf(stderr, "pingpong_client: %d sessions still open %.0f s after stop\n",
                   remaining_.load(), kDrainSeconds);
      std::fflush(stderr);
      std::_Exit(1);  // the sessions are not idle: they cannot be destroyed
    });
    loop_->loop();

    int64_t bytes = 0, messages = 0;
    for (auto& s : sessions_) {
      bytes += s->bytesRead();
      messages += s->messagesRead();
    }
    double elapsed = std::chrono::duration<double>(stop_ - start_).count();
    std::printf("%lld total bytes read\n", static_cast<long long>(bytes));
    std::printf("%lld total messages read\n", static_cast<long long>(messages));
    std::printf("%.2f average message size\n",
                messages > 0 ? static_cast<double>(bytes) / static_cast<double>(messages) : 0.0);
    std::printf("%.2f MiB/s throughput\n", static_cast<double>(bytes) / elapsed / (1024 * 1024));
    if (failed_ > 0) {
      std::fprintf(stderr, "pingpong_client: %d of %zu sessions failed\n", failed_.load(),
                   sessions_.size());
    }
    return failed_ == 0 && bytes > 0 ? 0 : 1;
  }

  const std::string& message() const { return message_; }

  // Called once per session, from its loop thread, once its TcpClient is idle.
  void sessionDone(bool failed) {
    if (failed) failed_.fetch_add(1);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) loop_->quit();
  }

 private:
  static constexpr double kDrainSeconds = 10;

  EventLoop* const loop_;
  EventLoopThreadPool threadPool_;
  std::string message_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::atomic<int> remaining_;  // sessions not yet done
  std::atomic<int> failed_{0};
  std::chrono::steady_clock::time_point start_, stop_;  // main loop thread only
};

Session::Session(EventLoop* loop, const InetAddress& serverAddr, const std::string& name,
                 Client* owner, const std::shared_ptr<muon::net::TlsContext>& tls)
    : loop_(loop), client_(loop, serverAddr, name), owner_(owner) {
  if (tls) {
    client_.setTransportLayer(tls);
    client_.setHandshakeFailureCallback([this](const TcpConnectionPtr& conn, const std::string& why) {
      // Every session would say the same: once per process.
      static std::atomic<bool> said{false};
      if (!said.exchange(true)) {
        std::fprintf(stderr, "pingpong_client: TLS handshake with %s failed: %s\n",
                     conn->peerAddress().toIpPort().c_str(), why.c_str());
      }
      if (state_ == kConnecting) {
        client_.stop();
        finish(true);
      }
    });
  }
  client_.setConnectionCallback([this](const TcpConnectionPtr& conn) { onConnection(conn); });
  client_.setMessageCallback(
      [this](const TcpConnectionPtr& conn, Buffer* buf, Timestamp) { onMessage(conn, buf); });
}

void Session::start() { client_.connect(); }

void Session::stop() {
  loop_->runInLoop([this] {
    if (state_ == kConnecting) {
      client_.stop();  // no connection will come up now
      LOG_ERROR << client_.name() << " never connected to "
                << client_.serverAddress().toIpPort();
      finish(true);
    } else if (state_ == kConnected) {
      state_ = kStopping;
      client_.disconnect();  // half-close once the queued output is written
    }
  });
}

void Session::onConnection(const TcpConnectionPtr& conn) {
  if (conn->connected()) {
    conn->setTcpNoDelay(true);
    state_ = kConnected;
    conn->send(owner_->message());
  } else if (state_ != kDone) {
    // The normal end is the server closing after our half-close.
    bool early = state_ != kStopping;
    if (early) LOG_ERROR << conn->name() << " closed by the server before the end";
    finish(early);
  }
}

void Session::onMessage(const TcpConnectionPtr& conn, Buffer* buf) {
  ++messagesRead_;
  bytesRead_ += static_cast<int64_t>(buf->readableBytes());
  if (state_ == kConnected) {
    conn->send(buf);  // sends and empties *buf
  } else {
    buf->retrieveAll();  // half-closed: just drain
  }
}

void Session::finish(bool failed) {
  state_ = kDone;
  // Queued, not called: the disconnect callback runs before TcpClient has
  // forgotten the connection (TcpClient::removeConnection comes right after
  // it in the same event), and once the last session is done the main
  // thread destroys the TcpClients. A functor queued now runs after that.
  loop_->queueInLoop([owner = owner_, failed] { owner->sessionDone(failed); });
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  const char* program = argv[0];
  std::shared_ptr<muon::net::TlsContext> tls;
  if (argc >= 3 && std::string(argv[1]) == "--tls") {
    tls = muon::examples::pingpongClientTls(program, argv[2]);
    if (!tls) return 1;
    argc -= 2;
    argv += 2;
  }
  long port = 0, threads = 0, blockSize = 0, sessions = 0;
  double seconds = 0;
  InetAddress serverAddr;
  if (help || argc != 7 || !parseInt(argv[2], 1, 65535, &port) ||
      !parseInt(argv[3], 1, 256, &threads) ||
      !parseInt(argv[4], 1, 64 << 20, &blockSize) || !parseInt(argv[5], 1, 1000000, &sessions) ||
      !parseNumber(argv[6], 0.01, 86400, &seconds) ||
      !InetAddress::parse(joinHostPort(argv[1], argv[2]), &serverAddr)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s [--tls CA] ADDRESS PORT THREADS BLOCKSIZE SESSIONS SECONDS\n"
                 "  THREADS 1..256, BLOCKSIZE bytes, SESSIONS connections, SECONDS may be "
                 "fractional\n",
                 program);
    return help ? 0 : 2;
  }
  raiseFdLimit();
  Logger::setLogLevel(Logger::WARN);  // TcpClient logs every connection at INFO

  EventLoop loop;
  Client client(&loop, serverAddr, static_cast<int>(threads), static_cast<size_t>(blockSize),
                static_cast<int>(sessions), tls);
  return client.run(seconds);
}
