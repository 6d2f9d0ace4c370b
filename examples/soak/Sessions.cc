#include "Sessions.h"

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpClient.h"
#include "muon/net/TcpConnection.h"

namespace soak {

using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpClient;
using muon::net::TcpConnectionPtr;

// One TcpClient. Everything but the constructor runs in loop_'s thread.
class Sessions::Session {
 public:
  Session(EventLoop* loop, const InetAddress& server, const std::string& name, Sessions* owner)
      : loop_(loop), owner_(owner), client_(loop, server, name) {
    client_.enableRetry();
    // A refused connect (backlog full at start-up) is tried again soon.
    client_.setRetryDelayMs(100, 2000);
    client_.setConnectionCallback([this](const TcpConnectionPtr& conn) { onConnection(conn); });
    client_.setMessageCallback([this](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
      onMessage(conn, buf);
    });
  }

  void connect() { client_.connect(); }

  // Any thread.
  void stop() {
    loop_->runInLoop([this] {
      stopping_ = true;
      if (up_) {
        client_.disconnect();  // no reconnect; done when the server closes
      } else {
        client_.stop();  // queues the connector's stop before our report
        reportStopped();
      }
    });
  }

 private:
  void onConnection(const TcpConnectionPtr& conn) {
    if (conn->connected()) {
      up_ = true;
      owner_->sessionUp();
      conn->setTcpNoDelay(true);
      LOG_INFO << conn->name() << " connected";
      conn->send(owner_->block_);
    } else {
      up_ = false;
      owner_->sessionDown();
      LOG_INFO << conn->name() << " closed" << (stopping_ ? "" : ", reconnecting");
      if (stopping_) reportStopped();
    }
  }

  void onMessage(const TcpConnectionPtr& conn, Buffer* buf) {
    if (stopping_) {
      buf->retrieveAll();  // half-closed: just drain
    } else {
      conn->send(buf);  // sends and empties *buf
    }
  }

  // Queued, not called: the disconnect callback runs before TcpClient has
  // forgotten the connection, and once every session reported, the base
  // thread may destroy the TcpClients.
  void reportStopped() {
    loop_->queueInLoop([owner = owner_] { owner->sessionStopped(); });
  }

  EventLoop* const loop_;
  Sessions* const owner_;
  TcpClient client_;
  bool up_ = false;
  bool stopping_ = false;
};

Sessions::Sessions(EventLoop* baseLoop, const InetAddress& server, int threads, int count,
                   size_t blockSize)
    : baseLoop_(baseLoop), block_(blockSize, 'x'), threadPool_(baseLoop, "soak-client") {
  threadPool_.setThreadNum(threads);
  threadPool_.start();
  for (int i = 0; i < count; ++i) {
    sessions_.push_back(std::make_unique<Session>(threadPool_.getNextLoop(), server,
                                                  "C" + std::to_string(i), this));
  }
}

Sessions::~Sessions() = default;

void Sessions::connectAll() {
  for (auto& s : sessions_) s->connect();
}

void Sessions::stopAll(std::function<void()> done) {
  stopped_ = std::move(done);
  running_.store(static_cast<int>(sessions_.size()));
  for (auto& s : sessions_) s->stop();
}

void Sessions::sessionStopped() {
  if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) baseLoop_->queueInLoop(stopped_);
}

}  // namespace soak
