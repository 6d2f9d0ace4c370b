#include "EchoServer.h"

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"

namespace soak {

using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnection;
using muon::net::TcpConnectionPtr;

namespace {
InetAddress loopbackAnyPort() {
  InetAddress addr;
  bool ok = InetAddress::parse("127.0.0.1:0", &addr);
  if (!ok) LOG_FATAL << "cannot parse 127.0.0.1:0";
  return addr;
}
}  // namespace

EchoServer::EchoServer(EventLoop* loop, int threads) : server_(loop, loopbackAnyPort(), "Soak") {
  server_.setThreadNum(threads);
  server_.setConnectionCallback([this](const TcpConnectionPtr& conn) { onConnection(conn); });
  server_.setMessageCallback(
      [this](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) { onMessage(conn, buf); });
}

void EchoServer::onConnection(const TcpConnectionPtr& conn) {
  if (conn->connected()) {
    conn->setTcpNoDelay(true);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      byAge_.push_back(conn);
    }
    LOG_INFO << conn->name() << " up from " << conn->peerAddress().toIpPort();
  } else {
    LOG_INFO << conn->name() << " down";
  }
}

void EchoServer::onMessage(const TcpConnectionPtr& conn, Buffer* buf) {
  const size_t len = buf->readableBytes();
  bytes_.fetch_add(len, std::memory_order_relaxed);
  conn->send(buf);  // sends and empties *buf
  const uint64_t n = messages_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n % kLogEvery == 0) {
    LOG_INFO << conn->name() << " echoed " << len << " bytes, message " << n;
  }
}

int EchoServer::churn(int count) {
  int closed = 0;
  while (closed < count) {
    TcpConnectionPtr conn;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (byAge_.empty()) break;
      conn = byAge_.front().lock();
      byAge_.pop_front();
    }
    if (!conn || !conn->connected()) continue;
    LOG_INFO << conn->name() << " churn: " << (forceNext_ ? "forceClose" : "shutdown");
    if (forceNext_) {
      conn->forceClose();
    } else {
      conn->shutdown();
    }
    forceNext_ = !forceNext_;
    ++closed;
  }
  churned_.fetch_add(static_cast<uint64_t>(closed), std::memory_order_relaxed);
  return closed;
}

}  // namespace soak
