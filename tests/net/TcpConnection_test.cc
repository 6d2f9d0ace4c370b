// TcpConnection on the failure paths (label `fault`): peers that vanish,
// reset, stay silent, or never read.
#include "muon/net/TcpConnection.h"

#include <fcntl.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "LogCapture.h"
#include "NetTestUtil.h"
#include "ServerFixture.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"

using namespace muon::net;
using namespace muon::net::test;
using muon::test::LogCapture;

namespace {

// Records the up and down calls, and the connection while it is up.
struct ConnectionLog {
  std::atomic<int> up{0};
  std::atomic<int> down{0};
  std::promise<TcpConnectionPtr> first;
  void operator()(const TcpConnectionPtr& conn) {
    if (conn->connected()) {
      if (up.fetch_add(1) == 0) first.set_value(conn);
    } else {
      down.fetch_add(1);
    }
  }
};

// A server (one I/O thread) whose connections are recorded in `log`, and one
// blocking client connected to it: the client's fd and the server's side.
struct OneConnection {
  ConnectionLog log;
  ServerThread server{1, [this](TcpServer& s) { s.setConnectionCallback(std::ref(log)); }};
  int fd = connectTo(server.address());
  TcpConnectionPtr conn = fd >= 0 ? log.first.get_future().get() : nullptr;
};

// The documented back-pressure policy on every connection of `s`: at `mark`
// bytes of output stop reading (counted in *marks); once the output has
// drained, read again. *connected gets the connection.
void pauseAtTheMark(TcpServer& s, size_t mark, std::atomic<int>* marks,
                    std::promise<TcpConnectionPtr>* connected) {
  s.setWriteCompleteCallback([](const TcpConnectionPtr& conn) {
    if (!conn->isReading()) conn->startRead();
  });
  s.setConnectionCallback([=](const TcpConnectionPtr& conn) {
    if (!conn->connected()) return;
    conn->setHighWaterMarkCallback(
        [marks](const TcpConnectionPtr& c, size_t) {
          marks->fetch_add(1);
          c->stopRead();
        },
        mark);
    connected->set_value(conn);
  });
}

}  // namespace

TEST(TcpConnectionFault, WriteToClosedPeerGivesEpipeNotSigpipe) {
  // SIGPIPE at its default (kill the process): surviving proves MSG_NOSIGNAL.
  ::signal(SIGPIPE, SIG_DFL);
  ConnectionLog log;
  ServerThread server(1, [&](TcpServer& s) {
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      // Not reading: only the write can discover that the peer is gone.
      if (conn->connected()) conn->stopRead();
      log(conn);
    });
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  TcpConnectionPtr conn = log.first.get_future().get();
  ::close(fd);
  const std::string chunk(65536, 'x');
  // The first write after the FIN is answered with RST; a later one fails.
  ASSERT_TRUE(waitFor([&] {
    conn->send(chunk);
    return log.down.load() > 0;
  }));
  for (int i = 0; i < 10; ++i) conn->send(chunk);  // dropped, not crashing
  runSync(conn->getLoop(), [] {});
  EXPECT_EQ(log.down.load(), 1);
  EXPECT_TRUE(conn->disconnected());
  EXPECT_TRUE(waitFor([&] { return server.numConnections() == 0; }));
}

TEST(TcpConnectionFault, PeerResetInTheMiddleOfALargeSend) {
  ::signal(SIGPIPE, SIG_DFL);
  std::atomic<int> down{0};
  std::weak_ptr<TcpConnection> weak;
  ServerThread server(1, [&](TcpServer& s) {
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (conn->connected()) {
        weak = conn;
        conn->send(makePattern(32 << 20));
      } else {
        down.fetch_add(1);
      }
    });
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  std::string part = readExactly(fd, 1 << 20);
  ASSERT_EQ(part, makePattern(32 << 20).substr(0, 1 << 20));
  closeWithReset(fd);
  ASSERT_TRUE(waitFor([&] { return down.load() == 1; }));
  EXPECT_TRUE(waitFor([&] { return server.numConnections() == 0; }));
  // Once removed, nothing keeps the connection (and its 31 MiB) alive.
  EXPECT_TRUE(waitFor([&] { return weak.expired(); }));
  runSync(server.loop(), [] {});
  EXPECT_EQ(down.load(), 1);
}

TEST(TcpConnectionFault, SilentClientDoesNotDisturbTheLoopAndIsClosedOnTimeout) {
  ConnectionLog log;
  ServerThread server(0, [&](TcpServer& s) {
    s.setMessageCallback(echo);
    s.setConnectionCallback(std::ref(log));
  });
  int silent = connectTo(server.address());
  ASSERT_GE(silent, 0);
  TcpConnectionPtr conn = log.first.get_future().get();
  // Others are served as usual.
  int other = connectTo(server.address());
  ASSERT_GE(other, 0);
  ASSERT_TRUE(writeAll(other, "hi", 2));
  EXPECT_EQ(readExactly(other, 2), "hi");
  ::close(other);
  ASSERT_TRUE(waitFor([&] { return log.down.load() == 1; }));
  // An idle connection costs no loop iterations.
  int64_t before = runSync(server.loop(), [&] { return server.loop()->iteration(); });
  std::promise<int64_t> after;
  server.loop()->runAfter(0.05, [&] { after.set_value(server.loop()->iteration()); });
  EXPECT_LE(after.get_future().get() - before, 4);
  // The usual cure for a silent client: close it after a delay.
  conn->forceCloseWithDelay(0.01);
  EXPECT_TRUE(readsEof(silent));
  EXPECT_TRUE(waitFor([&] { return log.down.load() == 2; }));
  ::close(silent);
}

TEST(TcpConnectionFault, ClientThatNeverReadsIsBoundedByHighWaterMark) {
  // The documented policy: at the mark, stop reading; when the output has
  // drained, read again. Input then waits in the kernel, not in muon.
  constexpr size_t kMark = 1 << 20;
  std::promise<TcpConnectionPtr> connected;
  std::atomic<int> marks{0};
  ServerThread server(1, [&](TcpServer& s) {
    s.setMessageCallback(echo);
    pauseAtTheMark(s, kMark, &marks, &connected);
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  TcpConnectionPtr conn = connected.get_future().get();
  ASSERT_EQ(::fcntl(fd, F_SETFL, O_NONBLOCK), 0);
  const std::string chunk = makePattern(65536);
  size_t sent = 0;
  // Send until the server has stopped taking data: 200 ms without progress.
  for (;;) {
    ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    ASSERT_TRUE(n < 0 && errno == EAGAIN);
    struct pollfd pfd = {fd, POLLOUT, 0};
    // Stalled: the server passed the mark and has stopped reading.
    if (::poll(&pfd, 1, 200) == 0 && marks.load() > 0) break;
    ASSERT_LT(sent, size_t{1} << 30) << "the server never stopped reading";
  }
  EXPECT_GT(sent, kMark);
  EXPECT_GE(marks.load(), 1);
  auto sizes = runSync(conn->getLoop(), [&] {
    return std::make_pair(conn->outputBuffer()->readableBytes(), conn->inputBuffer()->internalCapacity());
  });
  EXPECT_FALSE(conn->isReading());
  // At most the mark plus one read (buffer + 64 KiB extra).
  EXPECT_LE(sizes.first, kMark + 256 * 1024) << "output buffer";
  EXPECT_LE(sizes.second, 256u * 1024) << "input buffer";
  ::close(fd);
}

// The high-water-mark callback is queued; the output can drain before it
// runs (its write-complete callback first). Made to happen here: in one
// functor the loop fills the kernel's buffers and crosses a mark of one
// byte, then waits while the client reads all the kernel took; the next
// poll writes the rest, and only then does the mark's callback stop
// reading. A write-complete callback must follow, or reading never resumes.
TEST(TcpConnectionFault, AMarkCallbackAfterTheOutputDrainedIsFollowedByWriteComplete) {
  std::promise<TcpConnectionPtr> connected;
  std::atomic<int> marks{0};
  std::atomic<size_t> received{0};
  ServerThread server(1, [&](TcpServer& s) {
    s.setMessageCallback([&](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) {
      received.fetch_add(buf->readableBytes());
      buf->retrieveAll();
    });
    pauseAtTheMark(s, 1, &marks, &connected);
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  TcpConnectionPtr conn = connected.get_future().get();
  const std::string chunk = makePattern(1024);
  std::promise<std::pair<size_t, size_t>> kernelTook;  // of all sent
  std::promise<void> clientRead;
  conn->getLoop()->runInLoop([&] {
    size_t sent = 0;
    while (conn->outputBuffer()->readableBytes() == 0 && sent < (size_t{1} << 30)) {
      conn->send(chunk);
      sent += chunk.size();
    }
    kernelTook.set_value({sent - conn->outputBuffer()->readableBytes(), sent});
    clientRead.get_future().wait();
  });
  const std::pair<size_t, size_t> took = kernelTook.get_future().get();
  EXPECT_EQ(readExactly(fd, took.first).size(), took.first);
  clientRead.set_value();
  // The rest, then the mark's callback, which stops reading.
  EXPECT_EQ(readExactly(fd, took.second - took.first).size(), took.second - took.first);
  EXPECT_TRUE(waitFor([&] { return marks.load() == 1; }));
  ASSERT_TRUE(writeAll(fd, "12345", 5));
  EXPECT_TRUE(waitFor([&] { return received.load() == 5; }, std::chrono::seconds(5)))
      << "reading stayed stopped";
  ::close(fd);
}

TEST(TcpConnectionFault, StopReadHoldsDataUntilStartRead) {
  std::atomic<size_t> received{0};
  std::promise<TcpConnectionPtr> connected;
  ServerThread server(1, [&](TcpServer& s) {
    s.setMessageCallback([&](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) {
      received.fetch_add(buf->readableBytes());
      buf->retrieveAll();
    });
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (conn->connected()) connected.set_value(conn);
    });
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  TcpConnectionPtr conn = connected.get_future().get();
  conn->stopRead();
  runSync(conn->getLoop(), [] {});  // the connection's I/O loop, not the base loop
  ASSERT_TRUE(writeAll(fd, "12345", 5));
  std::promise<void> waited;
  conn->getLoop()->runAfter(0.03, [&] { waited.set_value(); });
  waited.get_future().wait();
  EXPECT_EQ(received.load(), 0u);
  conn->startRead();
  EXPECT_TRUE(waitFor([&] { return received.load() == 5; }));
  ::close(fd);
}

TEST(TcpConnectionFault, ForceCloseFromAnotherThreadDropsQueuedOutput) {
  OneConnection one;
  auto& [log, server, fd, conn] = one;
  ASSERT_GE(fd, 0);
  conn->send(makePattern(16 << 20));
  conn->forceClose();
  conn->forceClose();  // twice is harmless
  ASSERT_TRUE(waitFor([&] { return log.down.load() == 1; }));
  EXPECT_TRUE(conn->disconnected());
  // The peer sees the end (reset or EOF) well before 16 MiB.
  size_t total = 0;
  char buf[65536];
  for (;;) {
    ASSERT_TRUE(waitReadable(fd, 20000));
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  EXPECT_LT(total, size_t{16} << 20);
  ::close(fd);
}

TEST(TcpConnection, KeepsItsContextAndKnowsBothAddressesAndItsServersName) {
  std::promise<TcpConnectionPtr> connected;
  ServerThread server(0, [&](TcpServer& s) {
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (!conn->connected()) return;
      conn->setContext(std::string("session-42"));
      conn->setTcpNoDelay(true);
      connected.set_value(conn);
    });
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  TcpConnectionPtr conn = connected.get_future().get();
  runSync(server.loop(), [&] {
    EXPECT_EQ(std::any_cast<std::string>(conn->getContext()), "session-42");
    EXPECT_EQ(conn->localAddress(), server.address());
    EXPECT_EQ(conn->peerAddress().toIp(), "127.0.0.1");
    EXPECT_NE(conn->getTcpInfoString(), "");
  });
  EXPECT_NE(conn->name().find("test-"), std::string::npos);
  ::close(fd);
}

// send() in the loop thread with nothing queued writes to the socket at
// once: nothing is left in the output buffer and no EPOLLOUT is needed.
TEST(TcpConnection, SendWithNothingQueuedWritesAtOnce) {
  std::promise<size_t> leftInBuffer;
  ServerThread server(1, [&](TcpServer& s) {
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (!conn->connected()) return;
      conn->send(std::string_view("hello"));
      leftInBuffer.set_value(conn->outputBuffer()->readableBytes());
    });
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(leftInBuffer.get_future().get(), 0u);
  EXPECT_EQ(readExactly(fd, 5), "hello");
  ::close(fd);
}

// forceCloseWithDelay leaves the connection open for the delay, then closes.
TEST(TcpConnection, ForceCloseWithDelayClosesAfterTheDelayNotBefore) {
  ConnectionLog log;
  ServerThread server(1, [&](TcpServer& s) { s.setConnectionCallback(std::ref(log)); });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  TcpConnectionPtr conn = log.first.get_future().get();
  const Clock::time_point start = Clock::now();
  auto msSinceStart = [start] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  };
  conn->forceCloseWithDelay(0.3);
  // "No EOF yet" can only be watched for a while: 100 ms of the 300. The
  // timer's deadline is at least `start` + 300 ms on the same monotonic
  // clock, so an EOF seen here is only right if this thread was held up
  // past it; a check of the time instead of a bare "not readable" keeps
  // that from failing the test.
  if (waitReadable(fd, 100)) {
    EXPECT_GE(msSinceStart(), 299) << "ms to EOF";
  }
  ASSERT_TRUE(waitReadable(fd, 5000)) << "no EOF 5 s after a 0.3 s delay";
  const auto closedAfterMs = msSinceStart();
  char c;
  EXPECT_EQ(::read(fd, &c, 1), 0);
  EXPECT_GE(closedAfterMs, 299) << "ms to EOF";
  EXPECT_TRUE(waitFor([&] { return log.down.load() == 1; }));
  ::close(fd);
}

// A send from another thread that passed send()'s state check before
// shutdown() reaches the loop after the FIN has gone out. Writing it would
// fail with EPIPE and close the connection, cutting off what the peer still
// has to say; it is dropped instead and the read side stays open.
TEST(TcpConnectionFault, SendArrivingAfterTheHalfCloseIsDroppedAndReadingGoesOn) {
  LogCapture logs;
  ConnectionLog log;
  std::string received;  // loop thread only
  ServerThread server(1, [&](TcpServer& s) {
    s.setConnectionCallback(std::ref(log));
    s.setMessageCallback([&](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) {
      received += buf->retrieveAllAsString();
    });
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  TcpConnectionPtr conn = log.first.get_future().get();
  EventLoop* ioLoop = conn->getLoop();
  runSync(ioLoop, [&] {
    // The loop thread is held here, so the other thread's send (still
    // kConnected) is queued behind this functor ...
    std::thread([&] { conn->send(std::string_view("late")); }).join();
    // ... and the half-close, run right here, goes out before it.
    conn->shutdown();
  });
  drainLoop(ioLoop);  // the queued send has run, and any close it queued
  EXPECT_FALSE(conn->disconnected());
  EXPECT_EQ(LogCapture::count("give up writing"), 1);
  EXPECT_TRUE(readsEof(fd));  // the FIN and nothing before it
  ASSERT_TRUE(writeAll(fd, "still talking", 13));
  EXPECT_TRUE(waitFor([&] { return runSync(ioLoop, [&] { return received; }) == "still talking"; }));
  EXPECT_EQ(log.down.load(), 0);
  ::close(fd);
  EXPECT_TRUE(waitFor([&] { return log.down.load() == 1; }));
}

// send(Buffer*) empties the buffer whether the connection takes the bytes or
// drops them, and says which: it left the buffer full on a connection that
// was shut down or closed, so `while (buf.readableBytes() > 0)
// conn->send(&buf);` spun forever. Checked from the loop thread and from
// another thread, after shutdown() and after the close.
TEST(TcpConnectionFault, SendBufferToAClosedConnectionEmptiesItAndReturnsFalse) {
  OneConnection one;
  auto& [log, server, fd, conn] = one;
  ASSERT_GE(fd, 0);
  EventLoop* ioLoop = conn->getLoop();
  // Sends buf until it is empty, at most `limit` times; how many it took.
  auto sendUntilEmpty = [&conn](Buffer* buf, int limit, bool* taken) {
    int calls = 0;
    while (buf->readableBytes() > 0 && calls < limit) {
      *taken = conn->send(buf);
      ++calls;
    }
    return calls;
  };
  Buffer buf;
  bool taken = false;
  buf.append("hello");
  EXPECT_EQ(runSync(ioLoop, [&] { return sendUntilEmpty(&buf, 100, &taken); }), 1);
  EXPECT_TRUE(taken);
  EXPECT_EQ(readExactly(fd, 5), "hello");

  runSync(ioLoop, [&] {
    conn->shutdown();
    buf.append("after shutdown");
    EXPECT_EQ(sendUntilEmpty(&buf, 100, &taken), 1);
    EXPECT_FALSE(taken);
  });
  EXPECT_TRUE(readsEof(fd));
  ::close(fd);
  ASSERT_TRUE(waitFor([&] { return log.down.load() == 1; }));
  ASSERT_TRUE(conn->disconnected());

  buf.append("after the close, from another thread");
  EXPECT_EQ(sendUntilEmpty(&buf, 100, &taken), 1);
  EXPECT_FALSE(taken);
  buf.append("after the close, in the loop thread");
  EXPECT_EQ(runSync(ioLoop, [&] { return sendUntilEmpty(&buf, 100, &taken); }), 1);
  EXPECT_FALSE(taken);
  EXPECT_FALSE(conn->send("a string, dropped too"));
}

// Connections of one loop share its receive buffer while their own is
// empty; bytes a message callback leaves behind stay with their connection.
// Two clients on one loop each send half a line, then the rest: each must
// get back its own line, whole.
TEST(TcpConnection, PartialMessagesOfConnectionsOnOneLoopStayApart) {
  std::atomic<int> callbacks{0};
  ServerThread server(0, [&](TcpServer& s) {
    s.setMessageCallback([&](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
      // Echo whole lines only; a partial line waits in the buffer.
      while (const char* eol = buf->findEOL()) {
        const size_t len = static_cast<size_t>(eol + 1 - buf->peek());
        conn->send(std::string_view(buf->peek(), len));
        buf->retrieve(len);
      }
      callbacks.fetch_add(1);
    });
  });
  int a = connectTo(server.address());
  int b = connectTo(server.address());
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  // One step at a time, each seen by the server before the next is sent,
  // so every read after the first half-line finds the other's bytes waiting.
  int seen = 0;
  auto sendAndWait = [&](int fd, const std::string& s) {
    ASSERT_TRUE(writeAll(fd, s.data(), s.size()));
    ASSERT_TRUE(waitFor([&] { return callbacks.load() > seen; })) << "no callback for '" << s << "'";
    seen = callbacks.load();
  };
  sendAndWait(a, "alpha, first half");
  sendAndWait(b, "bravo, first half");
  sendAndWait(a, " and the rest of alpha\n");
  sendAndWait(b, " and the rest of bravo\n");
  EXPECT_EQ(readExactly(a, 40), "alpha, first half and the rest of alpha\n");
  EXPECT_EQ(readExactly(b, 40), "bravo, first half and the rest of bravo\n");
  ::close(a);
  ::close(b);
}

// Many connections whose data all arrives while their loop is busy: on
// io_uring their receives complete in one iteration, more of them than the
// receive ring has blocks (UringReceiveBlocks::kInitialBlocks); those fail
// with ENOBUFS and are re-armed, so every connection is still served.
TEST(TcpConnection, ManyConnectionsReceivingInTheSameIterationAreAllServed) {
  constexpr int kClients = 64;
  std::atomic<int> up{0};
  ServerThread server(0, [&](TcpServer& s) {
    s.setMessageCallback(echo);
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (conn->connected()) ++up;
    });
  });
  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    fds.push_back(connectTo(server.address()));
    ASSERT_GE(fds.back(), 0);
  }
  ASSERT_TRUE(waitFor([&] { return up.load() == kClients; }));
  drainLoop(server.loop());  // every receive armed
  std::promise<void> held;
  std::promise<void> release;
  server.loop()->runInLoop([&] {
    held.set_value();
    release.get_future().wait();
  });
  held.get_future().wait();
  for (int i = 0; i < kClients; ++i) {
    const std::string message = makePattern(1000, static_cast<uint32_t>(i + 1));
    ASSERT_TRUE(writeAll(fds[static_cast<size_t>(i)], message.data(), message.size()));
  }
  release.set_value();
  for (int i = 0; i < kClients; ++i) {
    std::string reply(1000, '\0');
    ASSERT_TRUE(readExactly(fds[static_cast<size_t>(i)], reply.data(), reply.size()))
        << "no reply for client " << i;
    EXPECT_EQ(reply, makePattern(1000, static_cast<uint32_t>(i + 1))) << "client " << i;
  }
  for (int fd : fds) ::close(fd);
}

// A connection receives into memory its loop shares while its own input
// buffer is empty (the loop's buffer on the readiness engines, the receive
// ring's blocks on io_uring), so one whose callback takes every message
// whole holds no big buffer however big the messages are: whether it sends
// the Buffer back (echo) or consumes it and replies with a copy.
void expectSmallInputBufferAfterWholeMessages(MessageCallback onMessage, size_t replyBytes) {
  std::promise<TcpConnectionPtr> connected;
  ServerThread server(1, [&](TcpServer& s) {
    s.setMessageCallback(onMessage);
    s.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      if (conn->connected()) connected.set_value(conn);
    });
  });
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  TcpConnectionPtr conn = connected.get_future().get();
  const std::string message = makePattern(16 * 1024);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(writeAll(fd, message.data(), message.size()));
    const std::string reply = readExactly(fd, replyBytes);
    if (replyBytes == message.size()) {
      ASSERT_EQ(reply, message);
    }
  }
  const size_t capacity = runSync(conn->getLoop(), [&] { return conn->inputBuffer()->internalCapacity(); });
  EXPECT_LE(capacity, Buffer::kCheapPrepend + Buffer::kInitialSize);
  ::close(fd);
}

TEST(TcpConnection, ConnectionWhoseCallbackTakesEverythingKeepsASmallInputBuffer) {
  expectSmallInputBufferAfterWholeMessages(echo, 16 * 1024);
}

TEST(TcpConnection, ConnectionWhoseCallbackConsumesEverythingKeepsASmallInputBuffer) {
  // Takes every byte at once, and replies once per whole message however
  // the bytes were split (loop thread only, one connection).
  size_t consumed = 0;
  auto consume = [&consumed](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
    consumed += buf->readableBytes();
    buf->retrieveAll();
    for (; consumed >= 16 * 1024; consumed -= 16 * 1024) conn->send(std::string_view("ok"));
  };
  expectSmallInputBufferAfterWholeMessages(consume, 2);
}
