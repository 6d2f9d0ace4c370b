// RelpClient against a real rsyslogd with imrelp that each test starts
// itself (tests/support/Rsyslogd.h: its own configuration, main queue
// Direct, a loopback port, always reaped), killed and restarted mid-stream;
// and against fake servers (FakeRelpServer.h) that never acknowledge,
// answer garbage, refuse, or send serverclose. Without rsyslogd and imrelp
// the daemon's tests skip saying why, or fail under CI / MUON_REQUIRE_ALL.
#include "muon/net/relp/RelpClient.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "FakeRelpServer.h"
#include "Rsyslogd.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThread.h"
#include "muon/net/InetAddress.h"

using muon::net::EventLoop;
using muon::net::EventLoopThread;
using muon::net::InetAddress;
using muon::net::relp::RelpClient;
using muon::net::relp::RelpClientCounters;
using muon::net::relp::RelpClientOptions;
using muon::net::relp::RelpFrameData;
using muon::net::test::FakeRelpServer;
using muon::test::Rsyslogd;

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

const char kApp[] = "muon-relp";

bool waitUntil(const std::function<bool()>& pred, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return true;
}

template <typename F>
void runSync(EventLoop* loop, F f) {
  std::promise<void> done;
  loop->runInLoop([&] {
    f();
    done.set_value();
  });
  done.get_future().wait();
}

// An RFC 5424 line as SyslogSink writes it, numbered.
std::string numberedLine(uint64_t n) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "<14>1 2026-11-27T01:00:00.000000Z muon-host %s 42 - - line %08llu", kApp,
                static_cast<unsigned long long>(n));
  return buf;
}

// How often each number arrived in rsyslogd's output.
std::map<uint64_t, int> arrivals(const Rsyslogd& daemon) {
  std::map<uint64_t, int> seen;
  for (const std::string& line : daemon.received(kApp)) {
    size_t at = line.rfind("line ");
    if (at != std::string::npos) ++seen[std::stoull(line.substr(at + 5))];
  }
  return seen;
}

// A RelpClient on its own loop thread, offered numbered lines [0, total):
// `perTick` of them every 10 ms (0: as fast as it takes them).
class Harness {
 public:
  Harness(uint16_t port, RelpClientOptions options) : loop_(thread_.startLoop()) {
    runSync(loop_, [&] {
      client_ = std::make_unique<RelpClient>(loop_, InetAddress(port, true), options);
      client_->setAckCallback([this](uint64_t tag) {
        if (tag != acked_.load()) inOrder_ = false;
        acked_.store(tag + 1);
      });
      client_->setErrorCallback([this](RelpClient::Error e, const std::string&) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++errors_[e];
      });
      client_->setResumeCallback([this] { pump(); });
      client_->setClosedCallback([this](bool clean) { closed_ = clean ? 1 : 2; });
      client_->start();
    });
  }
  ~Harness() {
    runSync(loop_, [&] {
      loop_->cancel(ticker_);
      client_.reset();
    });
  }

  void produce(uint64_t total, uint64_t perTick = 0) {
    runSync(loop_, [&] {
      total_ = total;
      perTick_ = perTick;
      budget_ = perTick == 0 ? total : perTick;
      if (perTick > 0) {
        ticker_ = loop_->runEvery(0.01, [this] {
          budget_ += perTick_;
          pump();
        });
      }
      pump();
    });
  }
  void close() {
    runSync(loop_, [&] { client_->close(); });
  }

  uint64_t acked() const { return acked_.load(); }
  uint64_t offered() const { return offered_.load(); }
  bool inOrder() const { return inOrder_.load(); }
  int closed() const { return closed_.load(); }  // 0 not yet, 1 clean, 2 timed out
  RelpClientCounters counters() const { return client_->counters(); }
  int errors(RelpClient::Error e) {
    std::lock_guard<std::mutex> lock(mutex_);
    return errors_[e];
  }
  size_t held() {
    size_t n = 0;
    runSync(loop_, [&] { n = client_->held(); });
    return n;
  }
  bool waitAcked(uint64_t n, milliseconds timeout) {
    return waitUntil([&] { return acked() >= n; }, timeout);
  }

 private:
  void pump() {
    uint64_t next = offered_.load();
    while (next < total_ && budget_ > 0) {
      if (client_->send(numberedLine(next), next) != RelpClient::SendResult::kQueued) break;
      ++next;
      --budget_;
    }
    offered_.store(next);
  }

  EventLoopThread thread_;
  EventLoop* loop_;
  std::unique_ptr<RelpClient> client_;
  muon::net::TimerId ticker_;
  uint64_t total_ = 0, perTick_ = 0, budget_ = 0;  // loop thread
  std::atomic<uint64_t> offered_{0};
  std::atomic<uint64_t> acked_{0};
  std::atomic<bool> inOrder_{true};
  std::atomic<int> closed_{0};
  std::mutex mutex_;
  std::map<RelpClient::Error, int> errors_;
};

RelpClientOptions fastOptions() {
  RelpClientOptions options;
  options.closeTimeoutMs = 3000;
  return options;
}

TEST(RelpClientRsyslog, EveryLineArrivesOnceAndCloseIsClean) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why) && daemon.start(&why), why);
  const uint64_t kLines = 20000;
  Harness h(daemon.relpPort(), fastOptions());
  h.produce(kLines);
  ASSERT_TRUE(h.waitAcked(kLines, seconds(60))) << h.acked() << " of " << kLines << " acknowledged";
  EXPECT_TRUE(h.inOrder());
  h.close();
  ASSERT_TRUE(waitUntil([&] { return h.closed() != 0; }, seconds(5)));
  EXPECT_EQ(h.closed(), 1);
  // Direct main queue: an acknowledged line is in the file already.
  std::map<uint64_t, int> seen = arrivals(daemon);
  EXPECT_EQ(seen.size(), kLines);
  for (const auto& [n, count] : seen) ASSERT_EQ(count, 1) << "line " << n;
  RelpClientCounters c = h.counters();
  EXPECT_EQ(c.framesSent, kLines);
  EXPECT_EQ(c.framesAcked, kLines);
  EXPECT_EQ(c.framesResent, 0u);
  EXPECT_EQ(c.sessions, 1u);
  EXPECT_EQ(c.errors, 0u);
}

// rsyslogd killed with SIGKILL mid-stream and restarted on the same port
// after 0.2-1 s, several times: every line arrives; the duplicates are at
// most what the client sent again, which is at most a window per reconnect.
TEST(RelpClientRsyslog, KilledAndRestartedDaemonLosesNoLine) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why) && daemon.start(&why), why);
  const uint64_t kLines = 60000;
  RelpClientOptions options = fastOptions();
  Harness h(daemon.relpPort(), options);
  h.produce(kLines, 150);  // 15,000 lines/s: about 4 s of lines
  const int restartDelaysMs[] = {200, 500, 1000, 300};
  int kills = 0;
  for (int delayMs : restartDelaysMs) {
    const uint64_t before = h.acked();
    ASSERT_TRUE(h.waitAcked(before + 2000, seconds(20))) << "no progress before kill " << kills;
    daemon.kill();
    ++kills;
    std::this_thread::sleep_for(milliseconds(delayMs));
    ASSERT_TRUE(daemon.start(&why)) << "restart " << kills << ": " << why;
  }
  ASSERT_TRUE(h.waitAcked(kLines, seconds(60))) << h.acked() << " of " << kLines << " acknowledged";
  EXPECT_TRUE(h.inOrder());
  std::map<uint64_t, int> seen = arrivals(daemon);
  uint64_t total = 0;
  for (const auto& entry : seen) total += static_cast<uint64_t>(entry.second);
  EXPECT_EQ(seen.size(), kLines) << "lines lost";
  const uint64_t duplicates = total - seen.size();
  RelpClientCounters c = h.counters();
  std::printf("kill test: %llu lines, %d kills, %llu reconnects, %llu sessions, %llu resent, "
              "%llu duplicates, %llu errors\n",
              static_cast<unsigned long long>(kLines), kills,
              static_cast<unsigned long long>(c.reconnects), static_cast<unsigned long long>(c.sessions),
              static_cast<unsigned long long>(c.framesResent), static_cast<unsigned long long>(duplicates),
              static_cast<unsigned long long>(c.errors));
  RecordProperty("duplicates", std::to_string(duplicates));
  RecordProperty("resent", std::to_string(c.framesResent));
  EXPECT_GE(c.reconnects, static_cast<uint64_t>(kills));
  EXPECT_LE(duplicates, c.framesResent);
  EXPECT_LE(c.framesResent, options.window * c.reconnects);
  EXPECT_EQ(c.framesAcked, kLines);
  EXPECT_EQ(c.framesSent, kLines + c.framesResent);
}

// Nothing listens at first; the client keeps trying (errors counted, the
// producer held back, not blocked) and reaches the daemon soon after it starts.
TEST(RelpClientRsyslog, DaemonDownAtStartIsReachedSoonAfterItComes) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why), why);
  RelpClientOptions options = fastOptions();
  options.queueLimit = 500;
  Harness h(daemon.relpPort(), options);
  h.produce(2000);
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(h.acked(), 0u);
  EXPECT_EQ(h.offered(), 500u);  // queueLimit, then kFull
  EXPECT_GE(h.errors(RelpClient::Error::kConnectFailed), 4);
  ASSERT_TRUE(daemon.start(&why)) << why;
  const auto up = Clock::now();
  ASSERT_TRUE(h.waitAcked(1, seconds(10)));
  const auto reachedMs = std::chrono::duration_cast<milliseconds>(Clock::now() - up).count();
  std::printf("daemon reached %lld ms after it listened\n", static_cast<long long>(reachedMs));
  EXPECT_LT(reachedMs, 1000);  // the back-off's cap is 250 ms
  ASSERT_TRUE(h.waitAcked(2000, seconds(30)));
  EXPECT_TRUE(h.inOrder());
  EXPECT_EQ(arrivals(daemon).size(), 2000u);
}

// A session that answers every frame with 200, as rsyslog does; records the
// messages it was sent.
struct GoodServer {
  std::mutex mutex;
  std::vector<std::string> messages;
  void serve(FakeRelpServer::Peer& peer) {
    if (!peer.acceptOpen()) return;
    RelpFrameData f;
    while (peer.next(&f)) {
      if (f.command == "close") {
        peer.respond(f.txnr, "");
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        messages.push_back(f.data);
      }
      peer.respond(f.txnr, "200 OK");
    }
  }
};

TEST(RelpClientFake, AServerThatNeverAcknowledgesFillsTheWindowAndNothingMore) {
  std::atomic<int> frames{0};
  FakeRelpServer server([&](FakeRelpServer::Peer& peer, int) {
    if (!peer.acceptOpen()) return;
    RelpFrameData f;
    while (peer.next(&f)) ++frames;
  });
  RelpClientOptions options = fastOptions();
  options.window = 16;
  options.queueLimit = 64;
  options.closeTimeoutMs = 300;
  Harness h(server.port(), options);
  h.produce(1000);
  ASSERT_TRUE(waitUntil([&] { return frames.load() >= 16; }, seconds(10)));
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(frames.load(), 16);
  EXPECT_EQ(h.counters().framesSent, 16u);
  EXPECT_EQ(h.offered(), 64u);  // the producer was told kFull, not blocked
  EXPECT_EQ(h.held(), 64u);
  EXPECT_EQ(h.acked(), 0u);
  EXPECT_EQ(server.connections(), 1);
  // close() gives up after closeTimeoutMs, unclean.
  h.close();
  ASSERT_TRUE(waitUntil([&] { return h.closed() != 0; }, seconds(5)));
  EXPECT_EQ(h.closed(), 2);
}

TEST(RelpClientFake, NoAnswerWithinTheAckTimeoutReconnectsAndResends) {
  GoodServer good;
  FakeRelpServer server([&](FakeRelpServer::Peer& peer, int index) {
    if (index == 0) {
      if (peer.acceptOpen()) peer.idle();
    } else {
      good.serve(peer);
    }
  });
  RelpClientOptions options = fastOptions();
  options.window = 8;
  options.ackTimeoutMs = 200;
  Harness h(server.port(), options);
  h.produce(100);
  ASSERT_TRUE(h.waitAcked(100, seconds(10)));
  EXPECT_TRUE(h.inOrder());
  EXPECT_EQ(h.errors(RelpClient::Error::kTimeout), 1);
  EXPECT_EQ(h.counters().framesResent, 8u);
}

TEST(RelpClientFake, GarbageIsAnErrorAndTheClientReconnects) {
  GoodServer good;
  FakeRelpServer server([&](FakeRelpServer::Peer& peer, int index) {
    if (index == 0) {
      RelpFrameData open;
      if (peer.next(&open)) peer.write("this is not RELP\n");
      peer.idle();
    } else {
      good.serve(peer);
    }
  });
  Harness h(server.port(), fastOptions());
  h.produce(50);
  ASSERT_TRUE(h.waitAcked(50, seconds(10)));
  EXPECT_TRUE(h.inOrder());
  EXPECT_EQ(h.errors(RelpClient::Error::kBadFrame), 1);
  RelpClientCounters c = h.counters();
  EXPECT_GE(c.errors, 1u);
  EXPECT_EQ(c.reconnects, 1u);
  EXPECT_EQ(c.sessions, 1u);  // the first open was never accepted
  EXPECT_EQ(c.framesResent, 0u);
  std::lock_guard<std::mutex> lock(good.mutex);
  ASSERT_EQ(good.messages.size(), 50u);
  EXPECT_EQ(good.messages[49], numberedLine(49));
}

TEST(RelpClientFake, ARefusedFrameIsSentAgainInANewSession) {
  GoodServer good;
  FakeRelpServer server([&](FakeRelpServer::Peer& peer, int index) {
    if (index == 0) {
      if (!peer.acceptOpen()) return;
      RelpFrameData f;
      if (peer.next(&f)) peer.respond(f.txnr, "500 not now");
      peer.idle();
    } else {
      good.serve(peer);
    }
  });
  Harness h(server.port(), fastOptions());
  h.produce(50);
  ASSERT_TRUE(h.waitAcked(50, seconds(10)));
  EXPECT_TRUE(h.inOrder());
  RelpClientCounters c = h.counters();
  EXPECT_EQ(c.refused, 1u);
  EXPECT_EQ(h.errors(RelpClient::Error::kRefused), 1);
  EXPECT_EQ(c.sessions, 2u);
  std::lock_guard<std::mutex> lock(good.mutex);
  ASSERT_EQ(good.messages.size(), 50u);  // all of them again: none was acknowledged
  EXPECT_EQ(good.messages[0], numberedLine(0));
}

TEST(RelpClientFake, ServerCloseEndsTheSessionAndTheRestIsResent) {
  GoodServer good;
  FakeRelpServer server([&](FakeRelpServer::Peer& peer, int index) {
    if (index == 0) {
      if (!peer.acceptOpen()) return;
      RelpFrameData f;
      for (int i = 0; i < 5 && peer.next(&f); ++i) peer.respond(f.txnr, "200 OK");
      peer.write("0 serverclose 0\n");
      peer.shutdownWrite();
      peer.idle();
    } else {
      good.serve(peer);
    }
  });
  RelpClientOptions options = fastOptions();
  options.window = 16;
  Harness h(server.port(), options);
  h.produce(100);
  ASSERT_TRUE(h.waitAcked(100, seconds(10)));
  EXPECT_TRUE(h.inOrder());
  RelpClientCounters c = h.counters();
  EXPECT_EQ(c.serverCloses, 1u);
  EXPECT_EQ(h.errors(RelpClient::Error::kServerClose), 1);
  EXPECT_EQ(c.sessions, 2u);
  EXPECT_GE(c.framesResent, 1u);
  EXPECT_LE(c.framesResent, options.window);
  std::lock_guard<std::mutex> lock(good.mutex);
  ASSERT_EQ(good.messages.size(), 95u);  // the five acknowledged ones are not sent again
  EXPECT_EQ(good.messages[0], numberedLine(5));
}

// Answers out of order are taken; the acknowledgements still come in order.
TEST(RelpClientFake, AnswersOutOfOrderAreReportedInOrder) {
  GoodServer good;
  FakeRelpServer server([&](FakeRelpServer::Peer& peer, int) {
    if (!peer.acceptOpen()) return;
    std::vector<uint32_t> txnrs;
    RelpFrameData f;
    while (txnrs.size() < 8 && peer.next(&f)) txnrs.push_back(f.txnr);
    for (auto it = txnrs.rbegin(); it != txnrs.rend(); ++it) peer.respond(*it, "200 OK");
    while (peer.next(&f)) peer.respond(f.txnr, "200 OK");
  });
  RelpClientOptions options = fastOptions();
  options.window = 8;
  Harness h(server.port(), options);
  h.produce(40);
  ASSERT_TRUE(h.waitAcked(40, seconds(10)));
  EXPECT_TRUE(h.inOrder());
  RelpClientCounters c = h.counters();
  EXPECT_EQ(c.errors, 0u);
  EXPECT_EQ(c.sessions, 1u);
}

// A response to a transaction never sent (or answered twice) ends the session.
TEST(RelpClientFake, AResponseToAnUnknownTransactionIsAProtocolError) {
  GoodServer good;
  FakeRelpServer server([&](FakeRelpServer::Peer& peer, int index) {
    if (index == 0) {
      if (!peer.acceptOpen()) return;
      RelpFrameData first, second;
      if (peer.next(&first) && peer.next(&second)) {
        peer.respond(second.txnr, "200 OK");
        peer.respond(second.txnr, "200 OK");  // twice, while the first is unanswered
      }
      peer.idle();
    } else {
      good.serve(peer);
    }
  });
  Harness h(server.port(), fastOptions());
  h.produce(20);
  ASSERT_TRUE(h.waitAcked(20, seconds(10)));
  EXPECT_TRUE(h.inOrder());
  EXPECT_EQ(h.errors(RelpClient::Error::kProtocol), 1);
  EXPECT_EQ(h.counters().sessions, 2u);
  // All 20 again, the one answered out of order too: its predecessor was not.
  EXPECT_EQ(h.counters().framesResent, 20u);
}

// What send() says besides kQueued and kFull: before start(), after
// close(), and for a message above maxMessageBytes.
TEST(RelpClientFake, SendRefusesWhatItCannotTake) {
  GoodServer good;
  FakeRelpServer server([&](FakeRelpServer::Peer& peer, int) { good.serve(peer); });
  EventLoopThread thread;
  EventLoop* loop = thread.startLoop();
  runSync(loop, [&] {
    RelpClientOptions options;
    options.maxMessageBytes = 10;
    RelpClient client(loop, InetAddress(server.port(), true), options);
    EXPECT_EQ(client.send("early", 1), RelpClient::SendResult::kClosed);
    client.start();
    EXPECT_EQ(client.send("0123456789", 2), RelpClient::SendResult::kQueued);
    EXPECT_EQ(client.send("0123456789a", 3), RelpClient::SendResult::kTooLarge);
    EXPECT_EQ(client.held(), 1u);
    client.close();
    EXPECT_EQ(client.send("late", 4), RelpClient::SendResult::kClosed);
  });
}

}  // namespace
