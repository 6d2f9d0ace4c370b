#include "muon/net/TcpServer.h"

#include <cassert>

#include "muon/base/Logging.h"
#include "muon/net/internal/Acceptor.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThreadPool.h"
#include "muon/net/internal/SocketsOps.h"
#include "muon/net/TcpConnection.h"

namespace muon {
namespace net {

namespace {
EventLoop* checkNotNull(EventLoop* loop) {
  if (loop == nullptr) LOG_FATAL << "TcpServer: the loop is null";
  return loop;
}
}  // namespace

TcpServer::TcpServer(EventLoop* loop, const InetAddress& listenAddr, const std::string& name,
                     Option option)
    : loop_(checkNotNull(loop)),
      name_(name),
      acceptor_(std::make_unique<Acceptor>(loop, listenAddr, option == kReusePort)),
      listenAddr_(sockets::getLocalAddr(acceptor_->fd())),
      threadPool_(std::make_shared<EventLoopThreadPool>(loop, name_)),
      connectionCallback_(defaultConnectionCallback),
      messageCallback_(defaultMessageCallback),
      nextConnId_(1),
      alive_(std::make_shared<int>(0)) {
  // The bound address, not the one asked for: port 0 becomes the real port.
  ipPort_ = listenAddr_.toIpPort();
  acceptor_->setNewConnectionCallback(
      [this](int sockfd, const InetAddress& peerAddr) { newConnection(sockfd, peerAddr); });
}

TcpServer::~TcpServer() {
  loop_->assertInLoopThread();
  LOG_TRACE << "TcpServer::~TcpServer [" << name_ << "] destructing";
  alive_.reset();  // from now on, closing connections leave the server alone
  for (auto& item : connections_) {
    TcpConnectionPtr conn(std::move(item.second));
    conn->getLoop()->runInLoop([conn] { conn->connectDestroyed(); });
  }
  connections_.clear();
  // threadPool_ goes next: each I/O loop runs the connectDestroyed queued
  // above before its thread exits.
}

void TcpServer::setThreadNum(int numThreads) {
  assert(numThreads >= 0);
  threadPool_->setThreadNum(numThreads);
}

void TcpServer::start() {
  std::call_once(started_, [this] {
    threadPool_->start(threadInitCallback_);
    acceptor_->listen();
  });
}

void TcpServer::newConnection(int sockfd, const InetAddress& peerAddr) {
  loop_->assertInLoopThread();
  EventLoop* ioLoop = threadPool_->getNextLoop();
  std::string connName = name_ + "-" + ipPort_ + "#" + std::to_string(nextConnId_++);
  LOG_DEBUG << "TcpServer::newConnection [" << name_ << "] - new connection [" << connName
            << "] from " << peerAddr.toIpPort();
  InetAddress localAddr(sockets::getLocalAddr(sockfd));
  auto conn =
      std::make_shared<TcpConnection>(ioLoop, connName, sockfd, localAddr, peerAddr, layer_.get());
  conn->setConnectionCallback(connectionCallback_);
  conn->setMessageCallback(messageCallback_);
  conn->setWriteCompleteCallback(writeCompleteCallback_);
  if (handshakeFailureCallback_) conn->setHandshakeFailureCallback(handshakeFailureCallback_);
  if (inputLimit_ > 0) conn->setInputLimitCallback(inputLimitCallback_, inputLimit_);
  // Runs in the I/O thread. It touches only the base loop (which outlives
  // the server) and a weak token; the server itself is looked at in the
  // base loop, and only if it still exists. The connection goes over weakly
  // too: had the server been destroyed meanwhile, a strong reference here
  // could be the last one and free the connection in the base loop, after
  // its I/O loop is gone. While the server lives, connections_ holds it.
  conn->setCloseCallback([this, baseLoop = loop_, alive = std::weak_ptr<int>(alive_)](
                             const TcpConnectionPtr& c) {
    baseLoop->runInLoop([this, alive, weakConn = std::weak_ptr<TcpConnection>(c)] {
      if (!alive.lock()) return;
      TcpConnectionPtr closed = weakConn.lock();
      assert(closed);  // still in connections_
      removeConnectionInLoop(closed);
    });
  });
  connections_[connName] = conn;
  ioLoop->runInLoop([conn] { conn->connectEstablished(); });
}

void TcpServer::removeConnectionInLoop(const TcpConnectionPtr& conn) {
  loop_->assertInLoopThread();
  LOG_DEBUG << "TcpServer::removeConnectionInLoop [" << name_ << "] - connection " << conn->name();
  size_t n = connections_.erase(conn->name());
  assert(n == 1);
  (void)n;
  // Queued, not run: we may be inside the connection's own handleEvent.
  conn->getLoop()->queueInLoop([conn] { conn->connectDestroyed(); });
}

}  // namespace net
}  // namespace muon
