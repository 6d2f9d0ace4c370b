// A program in muduo's style -- muduo's headers, namespaces, std::bind with
// _1, noncopyable, AtomicInt32, CountDownLatch, the Endian helpers -- built
// through muon::muduo_compat. A length-prefixed echo server in the main
// loop (serving from 2 I/O threads) and a client in an EventLoopThread:
// 100 messages go out, 100 come back whole and in order, then the client
// quits the main loop; a runEvery timer cancels itself after 3 runs. Exit
// status 0 if all that happened within 20 s.
//
// Two lines differ from what muduo would take: the context is read with
// std::any_cast (muduo: boost::any_cast), and the server's port comes from
// listenAddress(), muon's addition (the test listens on port 0).
#include <any>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "muduo/base/Atomic.h"
#include "muduo/base/CountDownLatch.h"
#include "muduo/base/Logging.h"
#include "muduo/base/StringPiece.h"
#include "muduo/net/Endian.h"
#include "muduo/net/EventLoop.h"
#include "muduo/net/EventLoopThread.h"
#include "muduo/net/TcpClient.h"
#include "muduo/net/TcpServer.h"

using namespace muduo;
using namespace muduo::net;

namespace {

const int kMessages = 100;

// Cuts "length (4 bytes, network order) + body" frames out of buf. Read
// with Buffer::peekInt32 and written with sockets::hostToNetwork32, so the
// two must agree on the byte order.
bool takeFrame(Buffer* buf, string* body) {
  if (buf->readableBytes() < sizeof(int32_t)) return false;
  const auto len = static_cast<size_t>(buf->peekInt32());
  if (buf->readableBytes() < sizeof(int32_t) + len) return false;
  buf->retrieveInt32();
  *body = buf->retrieveAsString(len);
  return true;
}

void sendFrame(const TcpConnectionPtr& conn, StringPiece body) {
  Buffer buf;
  buf.append(body.data(), body.size());
  const uint32_t be32 = sockets::hostToNetwork32(static_cast<uint32_t>(body.size()));
  buf.prepend(&be32, sizeof be32);
  conn->send(&buf);
}

class EchoServer : noncopyable {
 public:
  EchoServer(EventLoop* loop, const InetAddress& listenAddr) : server_(loop, listenAddr, "EchoServer") {
    server_.setConnectionCallback(std::bind(&EchoServer::onConnection, this, _1));
    server_.setMessageCallback(std::bind(&EchoServer::onMessage, this, _1, _2, _3));
  }
  void setThreadNum(int n) { server_.setThreadNum(n); }
  void start() { server_.start(); }
  uint16_t port() const { return server_.listenAddress().port(); }

 private:
  void onConnection(const TcpConnectionPtr& conn) {
    LOG_INFO << "EchoServer - " << conn->peerAddress().toIpPort() << " is "
             << (conn->connected() ? "UP" : "DOWN");
    if (conn->connected()) conn->setContext(0);  // frames echoed on this connection
  }
  void onMessage(const TcpConnectionPtr& conn, Buffer* buf, Timestamp) {
    string body;
    while (takeFrame(buf, &body)) {
      ++*std::any_cast<int>(conn->getMutableContext());
      sendFrame(conn, body);
    }
  }

  TcpServer server_;
};

class Client : noncopyable {
 public:
  // done runs in the client's loop once every echo is back.
  Client(EventLoop* loop, const InetAddress& serverAddr, std::function<void()> done)
      : client_(loop, serverAddr, "Client"), done_(std::move(done)) {
    client_.setConnectionCallback(std::bind(&Client::onConnection, this, _1));
    client_.setMessageCallback(std::bind(&Client::onMessage, this, _1, _2, _3));
  }
  void connect() { client_.connect(); }
  int received() { return received_.get(); }
  bool inOrder() const { return inOrder_; }

 private:
  void onConnection(const TcpConnectionPtr& conn) {
    if (!conn->connected()) return;
    for (int i = 0; i < kMessages; ++i) sendFrame(conn, "message " + std::to_string(i));
  }
  void onMessage(const TcpConnectionPtr& conn, Buffer* buf, Timestamp) {
    string body;
    while (takeFrame(buf, &body)) {
      const int n = received_.getAndAdd(1);
      if (body != "message " + std::to_string(n)) inOrder_ = false;
      if (n + 1 == kMessages) {
        conn->shutdown();
        done_();
      }
    }
  }

  TcpClient client_;
  std::function<void()> done_;
  AtomicInt32 received_;
  bool inOrder_ = true;  // the client loop's thread only
};

}  // namespace

int main() {
  Logger::setLogLevel(Logger::WARN);
  EventLoop loop;
  EchoServer server(&loop, InetAddress(0, true));
  server.setThreadNum(2);
  server.start();

  EventLoopThread clientThread;
  EventLoop* clientLoop = clientThread.startLoop();
  // A TcpClient lives and dies in its loop's thread.
  std::unique_ptr<Client> client;
  CountDownLatch connecting(1);
  // The main loop quits when the client is done and the timer below has
  // run three times, whichever comes last.
  bool clientDone = false;  // the main loop's thread only
  int ticks = 0;            // the same
  auto quitIfFinished = [&] {
    if (clientDone && ticks == 3) loop.quit();
  };
  auto onClientDone = [&] {
    loop.runInLoop([&] {
      clientDone = true;
      quitIfFinished();
    });
  };
  clientLoop->runInLoop([&] {
    client.reset(new Client(clientLoop, InetAddress("127.0.0.1", server.port()), onClientDone));
    client->connect();
    connecting.countDown();
  });
  connecting.wait();
  loop.runAfter(20.0, [&] {
    LOG_ERROR << "timed out";
    loop.quit();
  });
  // A repeating timer that cancels itself on its third run.
  TimerId ticker;
  ticker = loop.runEvery(0.001, [&] {
    if (++ticks == 3) {
      loop.cancel(ticker);
      quitIfFinished();
    }
  });
  loop.loop();

  int received = 0;
  bool inOrder = false;
  CountDownLatch done(1);
  clientLoop->runInLoop([&] {
    received = client->received();
    inOrder = client->inOrder();
    client.reset();
    done.countDown();
  });
  done.wait();
  std::printf("%d of %d messages echoed%s through a server with 2 I/O threads; timer ran %d times\n", received,
              kMessages, inOrder ? ", in order" : ", OUT OF ORDER", ticks);
  return received == kMessages && inOrder && ticks == 3 ? 0 : 1;
}
