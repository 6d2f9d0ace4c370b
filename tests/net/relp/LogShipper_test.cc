// LogShipper inside a process, beside the AsyncLogging whose files it ships,
// against a real rsyslogd with imrelp (tests/support/Rsyslogd.h): a line
// reaches the daemon within the logger's flushInterval (the backend's
// afterWrite wakes the shipper); retention keeps the files the shipper has
// not finished below its hard cap, and past it the shipper counts the lines
// it lost and ships a warning saying how many; a daemon away costs the
// application's log a few lines, not one per attempt.
#include "muon/net/relp/LogShipper.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <memory>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "FakeRelpServer.h"
#include "LogCapture.h"
#include "Rsyslogd.h"
#include "ShipTestSupport.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/LogFields.h"
#include "muon/base/Logging.h"
#include "muon/base/SyncLogging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThread.h"

using muon::AsyncLogging;
using muon::net::EventLoop;
using muon::net::EventLoopThread;
using muon::net::InetAddress;
using muon::net::relp::LogShipper;
using muon::net::relp::LogShipperOptions;
using muon::test::Rsyslogd;
using muon::test::shipArrivals;
using muon::test::shipLine;
using muon::test::TempDir;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

namespace {

const char kApp[] = "app";

template <typename F>
void runSync(EventLoop* loop, F f) {
  std::promise<void> done;
  loop->runInLoop([&] {
    f();
    done.set_value();
  });
  done.get_future().wait();
}

// A LogShipper on its own loop thread.
class ShipperThread {
 public:
  ShipperThread(uint16_t port, LogShipperOptions options) : loop_(thread_.startLoop()) {
    runSync(loop_, [&] {
      shipper_ = std::make_unique<LogShipper>(loop_, InetAddress(port, true), options);
      std::string error;
      started_ = shipper_->start(&error);
    });
  }
  ~ShipperThread() {
    runSync(loop_, [&] { shipper_.reset(); });
  }
  bool started() const { return started_; }
  LogShipper& shipper() { return *shipper_; }

 private:
  EventLoopThread thread_;
  EventLoop* loop_;
  std::unique_ptr<LogShipper> shipper_;
  bool started_ = false;
};

TEST(LogShipperTest, ALineReachesTheDaemonWithinFlushInterval) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why) && daemon.start(&why), why);
  TempDir logs;
  LogShipperOptions options;
  options.basename = logs.file(kApp);
  options.pollIntervalMs = 60 * 1000;  // only the wake-ups can be in time
  ShipperThread shipper(daemon.relpPort(), options);
  ASSERT_TRUE(shipper.started());

  AsyncLogging::Options logOptions;
  logOptions.flushInterval = 1;
  logOptions.afterWrite = shipper.shipper().wakeFunction();
  AsyncLogging log(options.basename, 1 << 30, logOptions);
  log.start();
  for (uint64_t i = 0; i < 5; ++i) {
    const std::string line = shipLine(i);
    const auto logged = Clock::now();
    log.append(line.data(), line.size());
    ASSERT_TRUE(daemon.waitFor(kApp, i + 1, seconds(5)));
    const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - logged);
    // The backend writes within flushInterval (1 s); the shipper follows at once.
    EXPECT_LT(took.count(), 1300) << "line " << i;
    std::this_thread::sleep_for(milliseconds(150 * i));
  }
  log.stop();
}

// A RELP server that acknowledges every frame and keeps the messages of the
// `syslog` frames, in order.
class RecordingRelpServer {
 public:
  RecordingRelpServer()
      : server_([this](muon::net::test::FakeRelpServer::Peer& peer, int) { serve(peer); }) {}
  uint16_t port() const { return server_.port(); }
  // The messages once `n` have come (within 10 s), or what came.
  std::vector<std::string> messages(size_t n) {
    const auto deadline = Clock::now() + seconds(10);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (messages_.size() >= n || Clock::now() > deadline) return messages_;
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
  }

 private:
  void serve(muon::net::test::FakeRelpServer::Peer& peer) {
    if (!peer.acceptOpen()) return;
    muon::net::relp::RelpFrameData frame;
    while (peer.next(&frame)) {
      if (frame.command == "syslog") {
        std::lock_guard<std::mutex> lock(mutex_);
        messages_.push_back(frame.data);
      }
      peer.respond(frame.txnr, "200 OK");
      if (frame.command == "close") return;
    }
  }

  std::mutex mutex_;
  std::vector<std::string> messages_;  // guarded by mutex_
  muon::net::test::FakeRelpServer server_;  // last: its thread uses the above
};

// The messages the shipper sends for the files of `basename`, `n` of them.
std::vector<std::string> shippedMessages(const std::string& basename, size_t n) {
  RecordingRelpServer server;
  LogShipperOptions options;
  options.basename = basename;
  options.appName = "app";
  options.pollIntervalMs = 50;
  ShipperThread shipper(server.port(), options);
  EXPECT_TRUE(shipper.started());
  return server.messages(n);
}

// The same statements written to a text file and to a JSON file ship as the
// same RFC 5424 messages: each JSON line with its own time, severity,
// thread, MSG and STRUCTURED-DATA (it went as a foreign line: severity
// notice, the daemon's time, no STRUCTURED-DATA).
TEST(LogShipperTest, AJsonFileShipsTheMessagesOfItsTextForm) {
  TempDir logs;
  size_t lines = 0;
  {
    muon::SyncLogging text(logs.file("text"), 1 << 30);
    muon::SyncLogging::Options jsonOptions;
    jsonOptions.files.format = muon::LineFormat::kJson;
    muon::SyncLogging json(logs.file("json"), 1 << 30, jsonOptions);
    auto toText = muon::Logger::addSink(text);
    auto toJson = muon::Logger::addSink(json);
    muon::Logger::setLogLevel(muon::Logger::DEBUG);
    LOG_INFO << "login" << muon::kv("user", "alice") << muon::kv("ms", 12)
             << muon::kv("note", "two \"words\"\n") << muon::kv("id", "12");
    LOG_WARN << "disk" << muon::kv("free", 0.5) << muon::kv("ok", false) << muon::kv("message", "m");
    LOG_DEBUG << "in a function" << muon::kv("k", "v");
    LOG_ERROR << "no fields at all";
    muon::Logger::setLogLevel(muon::Logger::INFO);
    // A line that did not come from Logger: the JSON file wraps it.
    const std::string foreign = "not a muon line\n";
    text.append(foreign.data(), foreign.size());
    json.append(foreign.data(), foreign.size());
    lines = 5;
  }
  const std::vector<std::string> fromText = shippedMessages(logs.file("text"), lines);
  const std::vector<std::string> fromJson = shippedMessages(logs.file("json"), lines);
  ASSERT_EQ(fromText.size(), lines);
  EXPECT_EQ(fromJson, fromText);
  // The text's messages are what they should be: structured, timed, leveled.
  EXPECT_NE(fromText[0].find("[muon@32473 user=\"alice\" ms=\"12\""), std::string::npos) << fromText[0];
  EXPECT_EQ(fromText[1].compare(0, 4, "<12>"), 0) << fromText[1];
  EXPECT_NE(fromText[2].find(" DEBUG "), std::string::npos) << fromText[2];
  EXPECT_EQ(fromText[4].compare(0, 6, "<13>1 "), 0) << fromText[4];
}

// The state file cannot be written (its directory is gone, as a full disk
// would refuse it): nothing is sent past the saved horizon, the error is
// reported, and shipping resumes once the state can be written again.
TEST(LogShipperTest, AStateFileThatCannotBeWrittenHoldsLinesAtTheHorizon) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why) && daemon.start(&why), why);
  TempDir logs;
  TempDir stateDir;
  const std::string sub = stateDir.file("sub");
  ASSERT_EQ(0, ::mkdir(sub.c_str(), 0700));
  LogShipperOptions options;
  options.basename = logs.file(kApp);
  options.stateFile = sub + "/state";
  options.relp.window = 32;
  options.pollIntervalMs = 50;
  const std::string file = logs.file("app.20261127-010000.testhost.4242.log");
  muon::test::appendTo(file, muon::test::shipLines(0, 1000));
  std::atomic<int> errors{0};
  EventLoopThread thread;
  EventLoop* loop = thread.startLoop();
  std::unique_ptr<LogShipper> shipper;
  runSync(loop, [&] {
    shipper = std::make_unique<LogShipper>(loop, InetAddress(daemon.relpPort(), true), options);
    shipper->setErrorCallback([&](const std::string& what) {
      if (what.find("cannot write state file") != std::string::npos) ++errors;
    });
    std::string error;
    ASSERT_TRUE(shipper->start(&error)) << error;
  });
  ASSERT_TRUE(daemon.waitFor(kApp, 1000, seconds(10)));
  std::this_thread::sleep_for(milliseconds(300));  // the state catches up
  ASSERT_EQ(0, ::unlink((sub + "/state").c_str()));
  ASSERT_EQ(0, ::rmdir(sub.c_str()));
  muon::test::appendTo(file, muon::test::shipLines(1000, 2000));
  std::this_thread::sleep_for(milliseconds(1000));
  // At most a window past what the last saved state accounts for.
  const size_t held = daemon.received(kApp).size();
  EXPECT_LE(held, 1000u + options.relp.window);
  EXPECT_GE(errors.load(), 1);
  ASSERT_EQ(0, ::mkdir(sub.c_str(), 0700));
  EXPECT_TRUE(daemon.waitFor(kApp, 2000, seconds(10)));
  EXPECT_EQ(2000u, shipArrivals(daemon, kApp).size());
  runSync(loop, [&] { shipper.reset(); });
  ::unlink((sub + "/state").c_str());
  ::rmdir(sub.c_str());
}

// A tmpfs of its own, mounted on a temporary directory and unmounted (lazily,
// so that a file still open cannot keep it) when the test ends. Needs root
// (CAP_SYS_ADMIN): ok() false, with the reason in why(), where it is not.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const std::string& size) {
    const std::string options = "size=" + size + ",mode=0700";
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                options.c_str()) == 0) {
      mounted_ = true;
    } else {
      why_ = std::string("cannot mount a tmpfs on ") + dir_.path() + ": " + std::strerror(errno) +
             " (needs root with CAP_SYS_ADMIN)";
    }
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool ok() const { return mounted_; }
  const std::string& why() const { return why_; }
  std::string file(const std::string& name) const { return dir_.file(name); }

  // Writes `name` until the file system refuses more (ENOSPC): full to the brim.
  bool fill(const std::string& name) const {
    const int fd = ::open(file(name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const std::string chunk(4096, 'x');
    ssize_t n;
    while ((n = ::write(fd, chunk.data(), chunk.size())) > 0) {
    }
    const bool full = n < 0 && errno == ENOSPC;
    ::close(fd);
    return full;
  }

 private:
  TempDir dir_;
  bool mounted_ = false;
  std::string why_;
};

uint64_t savedAckedLines(const std::string& stateFile) {
  muon::net::relp::ShipState state;
  bool exists = false;
  std::string error;
  if (!muon::net::relp::ShipState::load(stateFile, &state, &exists, &error) || !exists) return ~0ull;
  return state.ackedLines;
}

// The state file on a real device that is full (a small tmpfs filled to the
// brim): the saved position stops advancing, nothing is sent past the horizon
// it holds, the error is reported, and once there is room again shipping
// resumes and every line arrives.
TEST(LogShipperTest, AStateFileOnAFullDiskStopsAtTheHorizonAndResumesWhenThereIsRoom) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why) && daemon.start(&why), why);
  SmallTmpfs disk("64k");
  if (!disk.ok()) GTEST_SKIP() << disk.why();
  TempDir logs;
  LogShipperOptions options;
  options.basename = logs.file(kApp);
  options.stateFile = disk.file("state");
  options.relp.window = 32;
  options.pollIntervalMs = 50;
  const std::string file = logs.file("app.20261127-010000.testhost.4242.log");
  muon::test::appendTo(file, muon::test::shipLines(0, 1000));
  std::atomic<int> noSpace{0};
  EventLoopThread thread;
  EventLoop* loop = thread.startLoop();
  std::unique_ptr<LogShipper> shipper;
  runSync(loop, [&] {
    shipper = std::make_unique<LogShipper>(loop, InetAddress(daemon.relpPort(), true), options);
    shipper->setErrorCallback([&](const std::string& what) {
      if (what.find("cannot write state file") != std::string::npos &&
          what.find(std::strerror(ENOSPC)) != std::string::npos) {
        ++noSpace;
      }
    });
    std::string error;
    ASSERT_TRUE(shipper->start(&error)) << error;
  });
  ASSERT_TRUE(daemon.waitFor(kApp, 1000, seconds(10)));
  const auto caughtUp = Clock::now() + seconds(5);
  while (savedAckedLines(options.stateFile) != 1000 && Clock::now() < caughtUp) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_EQ(1000u, savedAckedLines(options.stateFile));

  ASSERT_TRUE(disk.fill("filler"));
  muon::test::appendTo(file, muon::test::shipLines(1000, 2000));
  std::this_thread::sleep_for(milliseconds(1000));
  // At most a window past what the saved state accounts for, and the saved
  // position where it was.
  EXPECT_LE(daemon.received(kApp).size(), 1000u + options.relp.window);
  EXPECT_EQ(1000u, savedAckedLines(options.stateFile));
  EXPECT_EQ(1, noSpace.load());  // reported once, not per attempt

  ASSERT_EQ(0, ::unlink(disk.file("filler").c_str()));
  EXPECT_TRUE(daemon.waitFor(kApp, 2000, seconds(10)));
  const auto saved = Clock::now() + seconds(5);
  while (savedAckedLines(options.stateFile) != 2000 && Clock::now() < saved) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(2000u, savedAckedLines(options.stateFile));
  const auto seen = shipArrivals(daemon, kApp);
  EXPECT_EQ(2000u, seen.size());
  for (const auto& [n, count] : seen) EXPECT_EQ(1, count) << "line " << n;
  runSync(loop, [&] { shipper.reset(); });
}

// The outage in-process: the daemon killed and back 16 s later costs
// the application's own log (everything the Logger writes in this process)
// at most 5 lines at the default report interval (10 s): the shipper, with
// no error callback, logs the first failure, at most one line per interval
// and the return; the connector's four attempts a second are DEBUG lines.
// Here at the same ratio with a 2 s interval, the daemon away 3.2 s.
TEST(LogShipperTest, AnOutageCostsTheApplicationsLogAtMostFiveLines) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why) && daemon.start(&why), why);
  TempDir logs;
  const std::string file = logs.file("app.20261127-010000.testhost.4242.log");
  muon::test::appendTo(file, muon::test::shipLines(0, 100));
  LogShipperOptions options;
  options.basename = logs.file(kApp);
  options.relp.reportIntervalMs = 2000;
  ShipperThread shipper(daemon.relpPort(), options);
  ASSERT_TRUE(shipper.started());
  auto shipped = [&](uint64_t n) {
    const auto deadline = Clock::now() + seconds(20);
    while (shipper.shipper().counters().shipped < n) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return true;
  };
  ASSERT_TRUE(shipped(100));
  muon::test::LogCapture appLog;
  daemon.kill();
  std::this_thread::sleep_for(milliseconds(3200));
  ASSERT_TRUE(daemon.start(&why)) << why;
  muon::test::appendTo(file, muon::test::shipLines(100, 200));
  ASSERT_TRUE(shipped(200)) << muon::test::LogCapture::text();
  const std::string text = muon::test::LogCapture::text();
  EXPECT_LE(std::count(text.begin(), text.end(), '\n'), 5) << text;
  EXPECT_EQ(muon::test::LogCapture::count("RELP: connection lost: "), 1) << text;
  EXPECT_GE(muon::test::LogCapture::count(", still trying)"), 1) << text;
  EXPECT_EQ(muon::test::LogCapture::count("RELP: session open again after "), 1) << text;
}

TEST(LogShipperTest, RetentionKeepsUnshippedFilesUntilItsHardCapThenSkippedLinesAreCountedAndWarned) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why), why);  // started later: the files pile up meanwhile
  TempDir logs;
  auto pin = std::make_shared<muon::LogFilePin>();
  LogShipperOptions options;
  options.basename = logs.file(kApp);
  options.pin = pin;
  options.relp.window = 16;
  ShipperThread shipper(daemon.relpPort(), options);
  ASSERT_TRUE(shipper.started());

  AsyncLogging::Options logOptions;
  logOptions.afterWrite = shipper.shipper().wakeFunction();
  logOptions.files.maxFiles = 2;
  logOptions.files.pin = pin;
  logOptions.files.pinnedMaxTotalBytes = 200 * 1000;
  // One file per batch: each batch (about 7 KB) is written at the flush and
  // passes the roll size.
  AsyncLogging log(options.basename, 4000, logOptions);
  log.start();
  const uint64_t perBatch = 100;
  uint64_t total = 0;
  auto batch = [&] {
    for (uint64_t i = 0; i < perBatch; ++i, ++total) {
      const std::string line = shipLine(total);
      log.append(line.data(), line.size());
    }
    log.flush();
  };
  auto logFiles = [&] { return logs.files().size(); };
  for (int b = 0; b < 10; ++b) batch();
  // maxFiles is 2, but nothing was shipped: all are kept.
  EXPECT_GE(logFiles(), 10u);
  // Past the hard cap the oldest go.
  for (int b = 0; b < 40; ++b) batch();
  log.stop();
  EXPECT_LT(logFiles(), 40u);

  ASSERT_TRUE(daemon.start(&why)) << why;
  const auto deadline = Clock::now() + seconds(20);
  std::map<uint64_t, int> seen;
  std::vector<std::string> warnings;
  for (;;) {
    warnings.clear();
    seen = shipArrivals(daemon, kApp, &warnings);
    const uint64_t skipped = shipper.shipper().counters().skipped;
    if (seen.size() + skipped == total && shipper.shipper().inFlight() == 0) break;
    ASSERT_LT(Clock::now(), deadline) << seen.size() << " arrived, " << skipped << " skipped of "
                                      << total;
    std::this_thread::sleep_for(milliseconds(20));
  }
  const uint64_t skipped = shipper.shipper().counters().skipped;
  EXPECT_GT(skipped, 0u);
  EXPECT_EQ(skipped, shipper.shipper().counters().skipped);
  // Every skipped line is in a warning the daemon received.
  uint64_t warned = 0;
  for (const std::string& w : warnings) {
    // "4 muon-ship: N lines of FILE were not shipped: it was deleted ..."
    const size_t at = w.find("muon-ship: ");
    unsigned long long n = 0;
    ASSERT_NE(std::string::npos, at) << w;
    ASSERT_EQ(1, std::sscanf(w.c_str() + at, "muon-ship: %llu lines of ", &n)) << w;
    EXPECT_NE(std::string::npos, w.find(" were not shipped: it was deleted")) << w;
    EXPECT_EQ('4', w[0]) << "severity warning: " << w;
    warned += n;
  }
  EXPECT_EQ(skipped, warned);
  for (const auto& [n, count] : seen) EXPECT_EQ(1, count) << "line " << n;
}

}  // namespace
