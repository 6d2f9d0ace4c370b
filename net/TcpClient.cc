#include "muon/net/TcpClient.h"

#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/internal/Connector.h"
#include "muon/net/EventLoop.h"
#include "muon/net/internal/SocketsOps.h"
#include "muon/net/TcpConnection.h"

namespace muon {
namespace net {

namespace {
// The close callback of a connection whose TcpClient is gone.
void removeOrphanConnection(const TcpConnectionPtr& conn) {
  conn->getLoop()->queueInLoop([conn] { conn->connectDestroyed(); });
}
}  // namespace

TcpClient::TcpClient(EventLoop* loop, const InetAddress& serverAddr, const std::string& name)
    : loop_(loop),
      connector_(std::make_shared<Connector>(loop, serverAddr)),
      name_(name),
      connectionCallback_(defaultConnectionCallback),
      messageCallback_(defaultMessageCallback),
      retry_(false),
      connect_(true),
      reconnectWhenClosed_(false),
      nextConnId_(1) {
  connector_->setNewConnectionCallback([this](int sockfd) { newConnection(sockfd); });
  LOG_DEBUG << "TcpClient::TcpClient[" << name_ << "] - connector "
            << static_cast<const void*>(connector_.get());
}

TcpClient::~TcpClient() {
  LOG_DEBUG << "TcpClient::~TcpClient[" << name_ << "] - connector "
            << static_cast<const void*>(connector_.get());
  TcpConnectionPtr conn;
  bool unique = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Requests of the io_uring engine in flight hold references too; they
    // are not users.
    unique = connection_ && connection_.use_count() == 1 + connection_->engineReferences();
    conn = connection_;
  }
  connector_->stop();
  if (conn) {
    assert(loop_ == conn->getLoop());
    // The connection may outlive the client (user code holds it): its close
    // must not reach this object.
    loop_->runInLoop([conn] { conn->setCloseCallback(removeOrphanConnection); });
    if (unique) conn->forceClose();
  }
}

void TcpClient::connect() {
  LOG_DEBUG << "TcpClient::connect[" << name_ << "] - connecting to "
            << connector_->serverAddress().toIpPort();
  const bool afterDisconnect = !connect_.exchange(true);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (connection_) {
      // Connected already. If disconnect() is still closing it, connect
      // again once it is gone (removeConnection), retry or not.
      if (afterDisconnect) reconnectWhenClosed_ = true;
      return;
    }
  }
  connector_->start();
}

void TcpClient::disconnect() {
  connect_ = false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (connection_) connection_->shutdown();
}

void TcpClient::stop() {
  connect_ = false;
  connector_->stop();
}

void TcpClient::setRetryDelayMs(int initialMs, int maxMs) { connector_->setRetryDelayMs(initialMs, maxMs); }

void TcpClient::setConnectTimeoutMs(int ms) { connector_->setConnectTimeoutMs(ms); }

void TcpClient::setConnectFailureCallback(ConnectFailureCallback cb) {
  connector_->setConnectFailureCallback(std::move(cb));
}

const InetAddress& TcpClient::serverAddress() const { return connector_->serverAddress(); }

void TcpClient::newConnection(int sockfd) {
  loop_->assertInLoopThread();
  InetAddress peerAddr(sockets::getPeerAddr(sockfd));
  InetAddress localAddr(sockets::getLocalAddr(sockfd));
  std::string connName = name_ + ":" + peerAddr.toIpPort() + "#" + std::to_string(nextConnId_++);
  auto conn =
      std::make_shared<TcpConnection>(loop_, connName, sockfd, localAddr, peerAddr, layer_.get());
  conn->setConnectionCallback(connectionCallback_);
  conn->setMessageCallback(messageCallback_);
  conn->setWriteCompleteCallback(writeCompleteCallback_);
  if (handshakeFailureCallback_) conn->setHandshakeFailureCallback(handshakeFailureCallback_);
  conn->setCloseCallback([this](const TcpConnectionPtr& c) { removeConnection(c); });
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connection_ = conn;
  }
  conn->connectEstablished();
}

void TcpClient::removeConnection(const TcpConnectionPtr& conn) {
  loop_->assertInLoopThread();
  assert(loop_ == conn->getLoop());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    assert(connection_ == conn);
    connection_.reset();
  }
  // Queued: we are inside the connection's handleEvent.
  loop_->queueInLoop([conn] { conn->connectDestroyed(); });
  const bool reconnect = reconnectWhenClosed_.exchange(false) || retry_;
  if (reconnect && connect_) {
    LOG_INFO << "TcpClient::removeConnection[" << name_ << "] - reconnecting to "
             << connector_->serverAddress().toIpPort();
    connector_->restart();
  } else {
    connector_->connectionClosed();
  }
}

}  // namespace net
}  // namespace muon
