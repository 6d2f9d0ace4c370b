#include "Tunnel.h"

#include <algorithm>
#include <any>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/TcpConnection.h"

using muon::net::Buffer;
using muon::net::TcpConnectionPtr;

namespace socks4a {

Tunnel::Tunnel(const TcpConnectionPtr& downstream, const muon::net::InetAddress& destination,
               size_t highWaterMark)
    : downstream_(downstream),
      client_(downstream->getLoop(), destination, "Socks4aTunnel " + downstream->name()),
      highWaterMark_(highWaterMark) {}

Tunnel::~Tunnel() { LOG_DEBUG << "Tunnel for " << client_.name() << " destroyed"; }

void Tunnel::connect(double connectTimeoutSeconds, ConnectedCallback onConnected) {
  onConnected_ = std::move(onConnected);
  // Weak: the tunnel must not keep itself alive through its own callbacks.
  std::weak_ptr<Tunnel> weak = weak_from_this();
  client_.setConnectionCallback([weak](const TcpConnectionPtr& upstream) {
    if (auto self = weak.lock()) self->onUpstreamConnection(upstream);
  });
  client_.setMessageCallback([weak](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) {
    auto self = weak.lock();
    if (self && self->downstream_) {
      relay(self->downstream_, buf, &self->peakToDownstream_);
    } else {
      buf->retrieveAll();
    }
  });
  client_.setWriteCompleteCallback([weak](const TcpConnectionPtr&) {
    auto self = weak.lock();
    if (self && self->downstream_ && !self->downstream_->isReading()) self->downstream_->startRead();
  });
  connectTimer_ = client_.getLoop()->runAfter(connectTimeoutSeconds, [weak] {
    auto self = weak.lock();
    if (self && self->onConnected_) {
      LOG_WARN << self->client_.name() << ": no connection to "
               << self->client_.serverAddress().toIpPort();
      self->client_.stop();
      auto cb = std::move(self->onConnected_);
      self->onConnected_ = nullptr;
      cb(false);
    }
  });
  client_.connect();
}

void Tunnel::onUpstreamConnection(const TcpConnectionPtr& upstream) {
  if (upstream->connected()) {
    onUpstreamUp(upstream);
    return;
  }
  LOG_INFO << client_.name() << ": upstream " << upstream->peerAddress().toIpPort() << " down";
  upstream_.reset();
  if (downstream_) closeAfterOutput(downstream_);
  // The last owner may be this context: release it after this callback,
  // not inside the TcpClient that is calling us.
  if (upstream->getContext().has_value()) {
    auto self = std::any_cast<std::shared_ptr<Tunnel>>(upstream->getContext());
    upstream->setContext(std::any());
    upstream->getLoop()->queueInLoop([self] {});
  }
}

void Tunnel::onUpstreamUp(const TcpConnectionPtr& upstream) {
  client_.getLoop()->cancel(connectTimer_);
  if (!onConnected_ || !downstream_) {  // timed out, or the client left meanwhile
    upstream->shutdown();
    return;
  }
  upstream_ = upstream;
  upstream->setContext(shared_from_this());
  upstream->setTcpNoDelay(true);
  upstream->setHighWaterMarkCallback(
      [weak = weak_from_this()](const TcpConnectionPtr&, size_t size) {
        auto self = weak.lock();
        if (self && self->downstream_) self->hold(self->downstream_, "destination", size);
      },
      highWaterMark_);
  downstream_->setHighWaterMarkCallback(
      [weak = weak_from_this()](const TcpConnectionPtr&, size_t size) {
        auto self = weak.lock();
        if (self && self->upstream_) self->hold(self->upstream_, "client", size);
      },
      highWaterMark_);
  auto cb = std::move(onConnected_);
  onConnected_ = nullptr;
  cb(true);
  // Whatever the client sent behind its request is still in its buffer.
  if (downstream_->inputBuffer()->readableBytes() > 0) {
    relay(upstream_, downstream_->inputBuffer(), &peakToUpstream_);
  }
}

void Tunnel::closeAfterOutput(const TcpConnectionPtr& conn) {
  // Reading may be paused by flow control; without reading, the peer's
  // close would never be seen and the connection would stay open.
  if (!conn->isReading()) conn->startRead();
  conn->shutdown();
}

void Tunnel::hold(const TcpConnectionPtr& source, const char* slowSide, size_t size) {
  LOG_INFO << client_.name() << ": output buffer to " << slowSide << " at " << size
           << " bytes, reading paused";
  source->stopRead();
}

void Tunnel::relay(const TcpConnectionPtr& conn, Buffer* buf, size_t* peak) {
  conn->send(buf);
  *peak = std::max(*peak, conn->outputBuffer()->readableBytes());
}

void Tunnel::onDownstreamMessage(Buffer* buf) {
  if (upstream_) {
    relay(upstream_, buf, &peakToUpstream_);
  } else if (!onConnected_) {
    buf->retrieveAll();  // upstream has gone: nowhere to send it
  }
  // Else upstream is not up yet: the bytes wait in buf (reading is stopped).
}

void Tunnel::onDownstreamWriteComplete() {
  if (upstream_ && !upstream_->isReading()) upstream_->startRead();
}

void Tunnel::onDownstreamDown() {
  LOG_INFO << client_.name() << ": client gone; peak output buffer to client " << peakToDownstream_
           << ", to destination " << peakToUpstream_ << " bytes";
  downstream_.reset();
  onConnected_ = nullptr;
  if (upstream_) {
    closeAfterOutput(upstream_);
  } else {
    client_.stop();
  }
}

}  // namespace socks4a
