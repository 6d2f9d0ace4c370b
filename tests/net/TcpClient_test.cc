// TcpClient: connecting, retrying, stopping (label `fault`).
#include "muon/net/TcpClient.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "LogCapture.h"
#include "NetTestUtil.h"
#include "ServerFixture.h"
#include "muon/net/Buffer.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThread.h"
#include "muon/net/internal/SocketsOps.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

using namespace muon::net;
using namespace muon::net::test;
using muon::test::LogCapture;

namespace {

// Waits `seconds` on loop's clock without blocking it.
void waitInLoop(EventLoop* loop, double seconds) {
  std::promise<void> done;
  loop->runAfter(seconds, [&] { done.set_value(); });
  done.get_future().wait();
}

// A TcpClient living in its own loop thread.
struct ClientThread {
  EventLoopThread thread;
  EventLoop* loop = thread.startLoop();
  std::unique_ptr<TcpClient> client;
  std::atomic<int> up{0}, down{0};

  ClientThread(const InetAddress& addr, int retryDelayMs = 5) {
    runSync(loop, [&] {
      client = std::make_unique<TcpClient>(loop, addr, "client");
      client->setRetryDelayMs(retryDelayMs, std::max(retryDelayMs, 40));
      client->setConnectionCallback([this](const TcpConnectionPtr& conn) {
        (conn->connected() ? up : down).fetch_add(1);
      });
    });
  }
  ~ClientThread() {
    runSync(loop, [&] { client.reset(); });
  }
};

// What a client's connect-failure callback was told, and in which thread.
struct FailureLog {
  std::mutex mutex;
  std::vector<int> errors;
  bool allInLoopThread = true;
  std::function<void()> onFailure;  // runs after recording, in the loop thread

  void watch(ClientThread& c) {
    runSync(c.loop, [&] {
      c.client->setConnectFailureCallback([this, loop = c.loop](int err) {
        {
          std::lock_guard<std::mutex> lock(mutex);
          errors.push_back(err);
          allInLoopThread = allInLoopThread && loop->isInLoopThread();
        }
        if (onFailure) onFailure();
      });
    });
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mutex);
    return errors.size();
  }
};

// A loopback listener whose backlog is full: the kernel drops further SYNs,
// so a connect to it stays in progress (SYN_SENT) and is never answered.
struct FullBacklogListener {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::vector<int> fillers;
  InetAddress address() const { return InetAddress(sockets::getLocalAddr(listener)); }

  FullBacklogListener() {
    InetAddress any = loopback(0);
    EXPECT_EQ(::bind(listener, any.getSockAddr(), any.sockLen()), 0);
    EXPECT_EQ(::listen(listener, 0), 0);
    const InetAddress addr = address();
    for (int i = 0; i < 2; ++i) {  // backlog 0 still queues one; fill it
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      ::connect(fd, addr.getSockAddr(), addr.sockLen());
      fillers.push_back(fd);
    }
  }
  ~FullBacklogListener() {
    for (int fd : fillers) ::close(fd);
    ::close(listener);
  }
  FullBacklogListener(const FullBacklogListener&) = delete;
  FullBacklogListener& operator=(const FullBacklogListener&) = delete;
};

}  // namespace

TEST(TcpClient, OneMiBComesBackWholeAndDisconnectClosesBothSides) {
  ServerThread server(1, [](TcpServer& s) { s.setMessageCallback(echo); });
  ClientThread c(server.address());
  const std::string data = makePattern(1 << 20);
  std::promise<std::string> got;
  std::string acc;
  runSync(c.loop, [&] {
    c.client->setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (conn->connected()) conn->send(data);
    });
    c.client->setMessageCallback([&](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) {
      acc += buf->retrieveAllAsString();
      if (acc.size() == data.size()) got.set_value(acc);
    });
  });
  c.client->connect();
  EXPECT_TRUE(got.get_future().get() == data);
  c.client->disconnect();  // half-close: the server closes in turn
  EXPECT_TRUE(waitFor([&] { return server.numConnections() == 0; }));
  EXPECT_TRUE(waitFor([&] { return c.client->connection() == nullptr; }));
}

TEST(TcpClientFault, RetriesAgainstClosedPortThenConnectsWhenServerAppears) {
  LogCapture logs(muon::Logger::DEBUG);  // the connector's retries are DEBUG lines
  const uint16_t port = unusedPort();
  ClientThread c(loopback(port), 5);
  c.client->connect();
  // Refused attempts are retried with back-off (5, 10, 20, 40 ms...).
  ASSERT_TRUE(waitFor([] { return LogCapture::count("retry connecting") >= 3; }));
  EXPECT_TRUE(LogCapture::contains("in 5 milliseconds"));
  EXPECT_TRUE(LogCapture::contains("in 10 milliseconds"));
  EXPECT_TRUE(LogCapture::contains("in 20 milliseconds"));
  EXPECT_EQ(c.up.load(), 0);
  ServerThread server(0, [](TcpServer& s) { s.setMessageCallback(echo); }, false, port);
  ASSERT_TRUE(waitFor([&] { return c.up.load() == 1; }));
  EXPECT_TRUE(waitFor([&] { return server.numConnections() == 1; }));
}

TEST(TcpClientFault, BackOffIsCapped) {
  LogCapture logs(muon::Logger::DEBUG);  // the connector's retries are DEBUG lines
  ClientThread c(loopback(unusedPort()), 5);  // cap 40 ms
  c.client->connect();
  ASSERT_TRUE(waitFor([] { return LogCapture::count("in 40 milliseconds") >= 2; }));
  EXPECT_FALSE(LogCapture::contains("in 80 milliseconds"));
  c.client->stop();
}

TEST(TcpClientFault, StopFromAnotherThreadWhileRetrying) {
  LogCapture logs(muon::Logger::DEBUG);  // the connector's retries are DEBUG lines
  const uint16_t port = unusedPort();
  ClientThread c(loopback(port), 5);
  c.client->connect();
  ASSERT_TRUE(waitFor([] { return LogCapture::count("retry connecting") >= 2; }));
  const int fdsBefore = countOpenFds();
  c.client->stop();  // from the test thread
  runSync(c.loop, [] {});
  runSync(c.loop, [] {});
  const int retries = LogCapture::count("retry connecting");
  EXPECT_LE(countOpenFds(), fdsBefore);  // no attempt left in flight
  // A server now appears, but the stopped client never connects.
  ServerThread server(0, [](TcpServer&) {}, false, port);
  waitInLoop(c.loop, 0.1);
  EXPECT_EQ(c.up.load(), 0);
  EXPECT_EQ(LogCapture::count("retry connecting"), retries);
  EXPECT_EQ(server.numConnections(), 0u);
}

TEST(TcpClientFault, StopWhileConnecting) {
  // The connect stays in progress until stop().
  FullBacklogListener listener;
  ClientThread c(listener.address(), 5);
  const int baseline = countOpenFds();
  const std::string before = describeOpenFds();
  c.client->connect();
  runSync(c.loop, [] {});
  ASSERT_EQ(countOpenFds(), baseline + 1)
      << "no attempt in flight; before:\n" << before << "after:\n" << describeOpenFds();
  c.client->stop();
  runSync(c.loop, [] {});  // stopInLoop
  runSync(c.loop, [] {});  // the channel, destroyed after it
  EXPECT_EQ(countOpenFds(), baseline) << describeOpenFds();
  EXPECT_EQ(c.up.load(), 0);
}

// A refused attempt used to be only logged and retried: the user could not
// tell. Each one is reported with ECONNREFUSED, in the loop thread, and the
// attempts go on (retry() is off: it concerns established connections).
// The port is bound and never listened on, so it stays ours and refuses.
TEST(TcpClientFault, EachRefusedAttemptIsReportedWithEconnrefusedAndRetriesGoOn) {
  const int bound = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  InetAddress any = loopback(0);
  ASSERT_EQ(::bind(bound, any.getSockAddr(), any.sockLen()), 0);
  ClientThread c(InetAddress(sockets::getLocalAddr(bound)), 5);
  FailureLog failures;
  failures.watch(c);
  c.client->connect();
  ASSERT_TRUE(waitFor([&] { return failures.count() >= 3; }));
  c.client->stop();
  drainLoop(c.loop);
  {
    std::lock_guard<std::mutex> lock(failures.mutex);
    for (int err : failures.errors) EXPECT_EQ(err, ECONNREFUSED);
    EXPECT_TRUE(failures.allInLoopThread);
  }
  EXPECT_EQ(c.up.load(), 0);
  ::close(bound);
}

// stop() from the callback ends the attempts: the retry scheduled before the
// report is cancelled, and no further report comes.
TEST(TcpClientFault, StopInTheConnectFailureCallbackEndsTheAttempts) {
  LogCapture logs(muon::Logger::DEBUG);  // the connector's retries are DEBUG lines
  const int bound = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  InetAddress any = loopback(0);
  ASSERT_EQ(::bind(bound, any.getSockAddr(), any.sockLen()), 0);
  ClientThread c(InetAddress(sockets::getLocalAddr(bound)), 5);
  FailureLog failures;
  failures.onFailure = [&] { c.client->stop(); };
  failures.watch(c);
  c.client->connect();
  ASSERT_TRUE(waitFor([&] { return failures.count() == 1; }));
  const int attempts = LogCapture::count("retry connecting");
  waitInLoop(c.loop, 0.1);  // twenty retry delays
  EXPECT_EQ(failures.count(), 1u);
  EXPECT_EQ(LogCapture::count("retry connecting"), attempts);
  ::close(bound);
}

// A connect the server never answers (its backlog is full, so the SYNs are
// dropped) hung until the kernel gave up, about two minutes; it now fails
// after the client's connect timeout with ETIMEDOUT, and its socket is
// closed.
TEST(TcpClientFault, AnUnansweredConnectFailsWithEtimedoutAfterTheConnectTimeout) {
  LogCapture logs;
  FullBacklogListener listener;
  ClientThread c(listener.address(), 60 * 1000);  // one attempt in this test
  FailureLog failures;
  failures.watch(c);
  runSync(c.loop, [&] { c.client->setConnectTimeoutMs(100); });
  const int baseline = countOpenFds();
  const auto start = Clock::now();
  c.client->connect();
  ASSERT_TRUE(waitFor([&] { return failures.count() == 1; }));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(100));
  {
    std::lock_guard<std::mutex> lock(failures.mutex);
    EXPECT_EQ(failures.errors[0], ETIMEDOUT);
    EXPECT_TRUE(failures.allInLoopThread);
  }
  EXPECT_TRUE(LogCapture::contains("timed out after 100 milliseconds"));
  drainLoop(c.loop);  // the channel goes after the batch
  EXPECT_EQ(countOpenFds(), baseline);
  EXPECT_EQ(c.up.load(), 0);
  c.client->stop();
}

TEST(TcpClientFault, StopInTheSameIterationAsTheConnectEvent) {
  ServerThread server(0, [](TcpServer& s) { s.setMessageCallback(echo); });
  ClientThread c(server.address(), 5);
  int pipefd[2];
  ASSERT_EQ(::pipe2(pipefd, O_CLOEXEC | O_NONBLOCK), 0);
  const int baseline = countOpenFds();
  std::unique_ptr<Channel> trigger;
  runSync(c.loop, [&] {
    // The pipe becomes readable first, then the client's socket writable
    // (loopback connects at once): both are in the next poll, in that order,
    // and the pipe's callback stops the client before its event is handled.
    trigger = std::make_unique<Channel>(c.loop, pipefd[0]);
    trigger->setReadCallback([&](muon::Timestamp) {
      char ch;
      ::read(pipefd[0], &ch, 1);
      c.client->stop();
    });
    trigger->enableReading();
    ASSERT_EQ(::write(pipefd[1], "x", 1), 1);
    c.client->connect();
  });
  runSync(c.loop, [] {});
  runSync(c.loop, [] {});
  EXPECT_EQ(c.up.load(), 0);
  // Our socket was closed (the server's side may take a moment to go).
  EXPECT_TRUE(waitFor([&] { return countOpenFds() == baseline; })) << countOpenFds();
  runSync(c.loop, [&] {
    trigger->disableAll();
    trigger->remove();
    trigger.reset();
  });
  ::close(pipefd[0]);
  ::close(pipefd[1]);
}

TEST(TcpClient, RetryReconnectsAfterTheServerCloses) {
  std::atomic<int> serverUps{0};
  ServerThread server(0, [&](TcpServer& s) {
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (conn->connected() && serverUps.fetch_add(1) == 0) conn->forceClose();  // drop the first
    });
  });
  ClientThread c(server.address(), 5);
  c.client->enableRetry();
  c.client->connect();
  ASSERT_TRUE(waitFor([&] { return c.up.load() == 2; }));
  EXPECT_EQ(c.down.load(), 1);
  // The server accepts on its own time: its callback may come after ours.
  EXPECT_TRUE(waitFor([&] { return serverUps.load() == 2; }));
}

TEST(TcpClient, DestroyedWhileConnected) {
  std::atomic<int> serverDown{0};
  ServerThread server(0, [&](TcpServer& s) {
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (!conn->connected()) serverDown.fetch_add(1);
    });
  });
  {
    ClientThread c(server.address(), 5);
    c.client->connect();
    ASSERT_TRUE(waitFor([&] { return c.up.load() == 1; }));
  }
  EXPECT_TRUE(waitFor([&] { return serverDown.load() == 1; }));
}

// hello_net's shape: server, client and loop in one thread, the client
// still connected when the loop stops. ~TcpClient force-closes the
// connection through the stopped loop, and that close queues the
// connection's connectDestroyed: ~EventLoop must run that too, or the
// connection is freed with its channel still registered (an abort).
TEST(TcpClient, DestroyedWithItsLoopStoppedWhileConnected) {
  std::atomic<int> serverDown{0};
  {
    EventLoop loop;
    TcpServer server(&loop, loopback(0), "local");
    server.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (!conn->connected()) serverDown.fetch_add(1);
    });
    server.setMessageCallback(echo);
    server.start();
    TcpClient client(&loop, server.listenAddress(), "local-client");
    client.setConnectionCallback([](const TcpConnectionPtr& conn) {
      if (conn->connected()) conn->send("ping");
    });
    std::string reply;
    client.setMessageCallback([&](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) {
      reply += buf->retrieveAllAsString();
      if (reply == "ping") loop.quit();
    });
    client.connect();
    loop.runAfter(20.0, [&loop] { loop.quit(); });  // a failure, not a hang
    loop.loop();
    EXPECT_EQ(reply, "ping");
    EXPECT_NE(client.connection(), nullptr);
  }
  // The client side was closed and destroyed in ~EventLoop; the server's
  // side never saw the close (its loop was gone), and its connection was
  // destroyed with the server.
  EXPECT_EQ(serverDown.load(), 1);
}

TEST(TcpClient, ConnectAgainAfterDisconnect) {
  ServerThread server(0, [](TcpServer& s) { s.setMessageCallback(echo); });
  ClientThread c(server.address(), 5);
  c.client->connect();
  ASSERT_TRUE(waitFor([&] { return c.up.load() == 1; }));
  c.client->connect();  // connected: nothing happens
  c.client->disconnect();
  ASSERT_TRUE(waitFor([&] { return c.down.load() == 1; }));
  c.client->connect();
  ASSERT_TRUE(waitFor([&] { return c.up.load() == 2; }));
  EXPECT_TRUE(waitFor([&] { return server.numConnections() == 1; }));
}

// Regression: a retry still scheduled when connect() made the connection
// fired later and opened a second one (newConnection replaced the first, and
// the first one's close then aborted on assert(connection_ == conn)).
TEST(TcpClientFault, ConnectWhileARetryIsScheduledMakesOneConnection) {
  LogCapture logs(muon::Logger::DEBUG);  // the connector's retries are DEBUG lines
  const uint16_t port = unusedPort();
  ClientThread c(loopback(port), 300);  // the first retry is due 300 ms after the refusal
  c.client->connect();
  ASSERT_TRUE(waitFor([] { return LogCapture::count("retry connecting") == 1; }));
  ServerThread server(0, [](TcpServer& s) { s.setMessageCallback(echo); }, false, port);
  c.client->connect();  // connects now, with the retry still scheduled
  ASSERT_TRUE(waitFor([&] { return c.up.load() == 1; }));
  waitInLoop(c.loop, 0.4);  // past the retry's deadline
  EXPECT_EQ(c.up.load(), 1);
  EXPECT_EQ(server.numConnections(), 1u);
  c.client->disconnect();
  EXPECT_TRUE(waitFor([&] { return c.down.load() == 1; }));
  EXPECT_TRUE(waitFor([&] { return c.client->connection() == nullptr; }));
  EXPECT_EQ(c.up.load(), 1);
}

// connect() while disconnect() is still closing the connection must connect
// once the old one is gone, not find it, do nothing and (retry off) never
// connect again.
TEST(TcpClient, ConnectDuringDisconnectConnectsOnceTheOldConnectionIsGone) {
  ServerThread server(0, [](TcpServer& s) { s.setMessageCallback(echo); });
  ClientThread c(server.address(), 5);
  c.client->connect();
  ASSERT_TRUE(waitFor([&] { return c.up.load() == 1; }));
  // Both from the loop thread, so the connection is surely still there
  // when connect() looks.
  runSync(c.loop, [&] {
    c.client->disconnect();
    c.client->connect();
    EXPECT_NE(c.client->connection(), nullptr);
  });
  ASSERT_TRUE(waitFor([&] { return c.up.load() == 2; }));
  EXPECT_EQ(c.down.load(), 1);
  EXPECT_TRUE(waitFor([&] { return server.numConnections() == 1; }));
}
