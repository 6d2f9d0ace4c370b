// muon-ship (net/relp/muon-ship.cc) as a user runs it, against a real
// rsyslogd with imrelp (tests/support/Rsyslogd.h): every line of rolled,
// current and zstd files arrives; new lines and files are followed; SIGKILL
// and a restart lose nothing and duplicate at most the window; SIGTERM
// prints one line and exits 0; bad input exits 2 saying what.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "FakeRelpServer.h"
#include "Rsyslogd.h"
#include "ShipTestSupport.h"
#include "TempDir.h"
#include "TestCertificates.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/LogFile.h"
#include "muon/base/filestages/AesGcmStage.h"
#include "muon/base/filestages/ZstdStage.h"

using muon::test::appendTo;
using muon::test::Rsyslogd;
using muon::test::shipArrivals;
using muon::test::shipLines;
using muon::test::ShipProcess;
using muon::test::TempDir;
using muon::test::TestCertificates;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const char kApp[] = "app";  // the basename's file name: muon-ship's default APP-NAME

// A log file of basename dir/app as LogFile names them, second `s` of the
// test's minute, from pid 4242.
std::string logName(const TempDir& dir, int s, const char* suffix = "") {
  char name[96];
  std::snprintf(name, sizeof name, "app.20261127-0100%02d.testhost.4242.log%s", s, suffix);
  return dir.file(name);
}

// Lines [from, to) as a file at `path` written by LogFile with `stages`
// (zstd, AES-GCM).
void writeStaged(const TempDir& scratch, const std::string& path, uint64_t from, uint64_t to,
                 std::vector<std::shared_ptr<muon::FileStage>> stages) {
  muon::LogFile::Options options;
  options.stages = std::move(stages);
  std::string made;
  {
    muon::LogFile file(scratch.file("z"), 1 << 30, false, 3, 1024, options);
    const std::string text = shipLines(from, to);
    file.append(text.data(), text.size());
    file.flush();
    made = file.currentFileName();
  }
  ASSERT_EQ(0, ::rename(made.c_str(), path.c_str()));
}

// Whether every number in [0, total) arrived; the duplicates in *dups.
bool allArrived(const Rsyslogd& daemon, uint64_t total, uint64_t* dups = nullptr) {
  const auto seen = shipArrivals(daemon, kApp);
  uint64_t extra = 0;
  for (const auto& [n, count] : seen) extra += static_cast<uint64_t>(count - 1);
  if (dups) *dups = extra;
  if (seen.size() != total) return false;
  return seen.begin()->first == 0 && seen.rbegin()->first == total - 1;
}

bool waitAll(const Rsyslogd& daemon, uint64_t total, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!allArrived(daemon, total)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// "shipped N lines, resent M, skipped K\n", and nothing else.
bool finalLine(const std::string& out, uint64_t* shipped, uint64_t* resent, uint64_t* skipped) {
  unsigned long long n = 0, m = 0, k = 0;
  int used = 0;
  if (std::sscanf(out.c_str(), "shipped %llu lines, resent %llu, skipped %llu\n%n", &n, &m, &k,
                  &used) != 3 ||
      static_cast<size_t>(used) != out.size() || out.back() != '\n') {
    return false;
  }
  // The numbers as printed, nothing around them (sscanf skips spaces).
  const std::string again = "shipped " + std::to_string(n) + " lines, resent " + std::to_string(m) +
                            ", skipped " + std::to_string(k) + "\n";
  if (again != out) return false;
  *shipped = n;
  *resent = m;
  *skipped = k;
  return true;
}

class MuonShipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ready_ = daemon_.enableRelp(&why) && daemon_.start(&why);
    why_ = why;
  }
  std::vector<std::string> args(const std::string& window = "128") {
    return {"--relp", "127.0.0.1:" + std::to_string(daemon_.relpPort()), "--state",
            work_.file("state"), "--window", window, logs_.file("app")};
  }

  Rsyslogd daemon_;
  bool ready_ = false;
  std::string why_;
  TempDir logs_;
  TempDir work_;
};

TEST_F(MuonShipTest, DeliversRolledCurrentZstdAndEncryptedFilesAndFollowsNewOnes) {
  MUON_REQUIRE_RELP_OR_SKIP(ready_, why_);
  // The key of the .enc file, as muon-logcat takes it: 64 hex digits, mode 600.
  const std::string keyFile = work_.file("key");
  appendTo(keyFile, std::string(64, 'a') + "\n");
  ASSERT_EQ(0, ::chmod(keyFile.c_str(), 0600));
  std::string error;
  auto aes = muon::AesGcmStage::fromKeyFile(keyFile, &error);
  ASSERT_TRUE(aes) << error;
  appendTo(logName(logs_, 0), shipLines(0, 3000));  // rolled
  writeStaged(work_, logName(logs_, 1, ".zst"), 3000, 6000,
              {std::make_shared<muon::ZstdStage>()});  // rolled, compressed
  writeStaged(work_, logName(logs_, 1, ".1.zst.enc"), 6000, 7000,
              {std::make_shared<muon::ZstdStage>(), aes});  // a second roll in that second, encrypted
  appendTo(logName(logs_, 2, ".1"), shipLines(7000, 7500));
  appendTo(logName(logs_, 3), shipLines(7500, 8000));  // current
  std::vector<std::string> withKey = args();
  withKey.insert(withKey.begin(), {"--key-file", keyFile});
  ShipProcess ship(work_, withKey);
  ASSERT_TRUE(waitAll(daemon_, 8000, seconds(20))) << ship.err();
  // The current file grows, then rolls into a new file.
  appendTo(logName(logs_, 3), shipLines(8000, 8500));
  appendTo(logName(logs_, 4), shipLines(8500, 9000));
  ASSERT_TRUE(waitAll(daemon_, 9000, seconds(20))) << ship.err();
  uint64_t dups = 0;
  allArrived(daemon_, 9000, &dups);
  EXPECT_EQ(0u, dups);
  EXPECT_EQ(0, ship.signal(SIGTERM)) << ship.err();
  uint64_t shipped, resent, skipped;
  ASSERT_TRUE(finalLine(ship.out(), &shipped, &resent, &skipped)) << "stdout: " << ship.out();
  EXPECT_EQ(9000u, shipped);
  EXPECT_EQ(0u, resent);
  EXPECT_EQ(0u, skipped);
  // Severity and MSG as SyslogSink writes them: info, the line after its date-time.
  const std::vector<std::string> got = daemon_.received(kApp);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ("6 4242 INFO  ship 0000000 padding padding - ship.cc:7", got.front());
}

TEST_F(MuonShipTest, KilledAndRestartedLosesNothingAndDuplicatesAtMostTheWindow) {
  MUON_REQUIRE_RELP_OR_SKIP(ready_, why_);
  const uint64_t total = 60000;
  const uint64_t window = 64;
  appendTo(logName(logs_, 0), shipLines(0, total / 2));
  appendTo(logName(logs_, 1), shipLines(total / 2, total));
  {
    ShipProcess first(work_, args(std::to_string(window)), "first");
    // Killed mid-stream.
    ASSERT_TRUE(daemon_.waitFor(kApp, total / 3, seconds(20))) << first.err();
    first.signal(SIGKILL);
  }
  ASSERT_LT(daemon_.received(kApp).size(), total) << "not killed mid-stream";
  ShipProcess second(work_, args(std::to_string(window)), "second");
  ASSERT_TRUE(waitAll(daemon_, total, seconds(30))) << second.err();
  EXPECT_EQ(0, second.signal(SIGTERM)) << second.err();
  uint64_t dups = 0;
  allArrived(daemon_, total, &dups);
  EXPECT_LE(dups, window);
  uint64_t shipped, resent, skipped;
  ASSERT_TRUE(finalLine(second.out(), &shipped, &resent, &skipped)) << "stdout: " << second.out();
  EXPECT_EQ(total, shipped);  // counts since the state file began
  EXPECT_GE(resent, dups);    // every duplicate was counted as a possible one
  EXPECT_LE(resent, window);
  EXPECT_EQ(0u, skipped);
}

// An encrypted file without the key: its lines cannot be shipped, and
// muon-ship says so (stderr and a warning line) rather than pass over it.
TEST_F(MuonShipTest, AnEncryptedFileWithoutTheKeyIsReportedNotPassedOver) {
  MUON_REQUIRE_RELP_OR_SKIP(ready_, why_);
  muon::AesKey key;
  key.fill(7);
  writeStaged(work_, logName(logs_, 0, ".enc"), 0, 100, {std::make_shared<muon::AesGcmStage>(key)});
  appendTo(logName(logs_, 1), shipLines(100, 200));
  ShipProcess ship(work_, args());
  ASSERT_TRUE(daemon_.waitFor(kApp, 101, seconds(20))) << ship.err();
  std::vector<std::string> others;
  const auto seen = shipArrivals(daemon_, kApp, &others);
  EXPECT_EQ(100u, seen.size());
  ASSERT_EQ(1u, others.size());
  EXPECT_NE(std::string::npos, others[0].find("the lines of app.20261127-010000.testhost.4242.log.enc "
                                               "were not shipped: its text stops there: the file is "
                                               "encrypted")) << others[0];
  EXPECT_NE(std::string::npos, ship.err().find("were not shipped")) << ship.err();
  EXPECT_EQ(0, ship.signal(SIGTERM));
}

// A server that takes the session and never acknowledges: muon-ship sends
// one window and no more, SIGTERM still ends it (bounded) with nothing
// counted as shipped, and the files keep everything for the next run.
TEST_F(MuonShipTest, AServerThatNeverAcknowledgesGetsOneWindowAndTheFilesKeepTheRest) {
  MUON_REQUIRE_RELP_OR_SKIP(ready_, why_);
  std::atomic<int> frames{0};
  muon::net::test::FakeRelpServer silent([&](muon::net::test::FakeRelpServer::Peer& peer, int) {
    if (!peer.acceptOpen()) return;
    muon::net::relp::RelpFrameData f;
    while (peer.next(&f)) ++frames;
  });
  appendTo(logName(logs_, 0), shipLines(0, 1000));
  {
    ShipProcess ship(work_, {"--relp", "127.0.0.1:" + std::to_string(silent.port()), "--state",
                             work_.file("state"), "--window", "16", logs_.file("app")},
                     "silent");
    const auto deadline = std::chrono::steady_clock::now() + seconds(10);
    while (frames.load() < 16 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    std::this_thread::sleep_for(milliseconds(300));
    EXPECT_EQ(16, frames.load());
    const auto stopAt = std::chrono::steady_clock::now();
    EXPECT_EQ(0, ship.signal(SIGTERM)) << ship.err();
    EXPECT_LT(std::chrono::steady_clock::now() - stopAt, seconds(8));  // closeTimeoutMs is 5 s
    EXPECT_EQ("shipped 0 lines, resent 0, skipped 0\n", ship.out());
    EXPECT_NE(std::string::npos, ship.err().find("16 lines were not acknowledged")) << ship.err();
  }
  // The next run, against a daemon that answers, ships all of it.
  ShipProcess ship(work_, args("16"));
  ASSERT_TRUE(waitAll(daemon_, 1000, seconds(20))) << ship.err();
  EXPECT_EQ(0, ship.signal(SIGTERM)) << ship.err();
}

// The full scale, for the fault run and the daemon down at start:
// set by the ctest entry MuonShipFullScale (plain builds only); the
// sanitizer builds and the ordinary entries run the scaled versions.
bool fullScale() {
  const char* v = std::getenv("MUON_SHIP_FULL_SCALE");
  return v != nullptr && std::string(v) == "1";
}

// The daemon down at start (3 s, or the 10 s at full scale):
// muon-ship keeps trying and everything arrives once it is up.
// RELP over TLS against imrelp with tls="on" and mutual authentication
// (certvalid, librelp's OpenSSL driver): a server certificate muon-ship does
// not trust is refused with the reason on stderr and nothing is sent; with
// the right CA and a client certificate every line arrives.
// imrelp over TLS with the test CA's server certificate, requiring a client
// certificate (certvalid), as docs/logging.md's daemon; a log of `lines_`
// lines to ship.
class MuonShipTls : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.ok()) << certs_.error();
    std::string why;
    bool ready = daemon_.enableRelp(&why);
    if (ready) {
      daemon_.enableRelpTls(certs_.file("ca.pem"), certs_.file("server.pem"),
                            certs_.file("server.key"));
      ready = daemon_.start(&why);
    }
    MUON_REQUIRE_RELP_OR_SKIP(ready, why);
    appendTo(logName(logs_, 0), shipLines(0, 1000));
  }

  TestCertificates certs_;
  Rsyslogd daemon_;
  TempDir logs_, work_;
};

// Waits (at most `timeout`) until `text` is in muon-ship's stderr.
bool waitForErr(const ShipProcess& ship, const std::string& text, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (ship.err().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

TEST_F(MuonShipTls, MutualAuthenticationDeliversAndAnUntrustedServerGetsNothing) {
  const std::string relp = "127.0.0.1:" + std::to_string(daemon_.relpPort());
  {
    ShipProcess ship(work_, {"--tls-ca", certs_.file("other-ca.pem"), "--tls-cert",
                             certs_.file("client.pem"), "--tls-key", certs_.file("client.key"),
                             "--relp", relp, "--state", work_.file("untrusting"), logs_.file("app")});
    // rsyslogd sends its CA with its certificate: OpenSSL names the
    // untrusted root ("self-signed certificate in certificate chain").
    const std::string reason = "muon-ship: RELP: TLS refused: certificate verify failed: ";
    EXPECT_TRUE(waitForErr(ship, reason, seconds(10))) << ship.err();
    EXPECT_EQ(0, ship.signal(SIGTERM)) << ship.err();
    uint64_t shipped, resent, skipped;
    ASSERT_TRUE(finalLine(ship.out(), &shipped, &resent, &skipped)) << "stdout: " << ship.out();
    EXPECT_EQ(0u, shipped);
    EXPECT_TRUE(daemon_.received(kApp).empty()) << "a line went to a server that was not trusted";
  }
  ShipProcess ship(work_, {"--tls-ca", certs_.file("ca.pem"), "--tls-cert",
                           certs_.file("client.pem"), "--tls-key", certs_.file("client.key"),
                           "--relp", relp, "--state", work_.file("state"), logs_.file("app")});
  ASSERT_TRUE(waitAll(daemon_, 1000, seconds(20))) << ship.err();
  EXPECT_EQ(0, ship.signal(SIGTERM)) << ship.err();
  uint64_t shipped, resent, skipped;
  ASSERT_TRUE(finalLine(ship.out(), &shipped, &resent, &skipped)) << "stdout: " << ship.out();
  EXPECT_EQ(1000u, shipped);
}

// The docs' daemon (tls.authMode="certvalid") and muon-ship without
// --tls-cert: with TLS 1.3 our side of the handshake is done before the
// daemon refuses us, and its alert says why. muon-ship says so as the TLS
// refusal it is, with OpenSSL's reason, once for the attempts of a few
// seconds (not "connection lost" on every attempt), and sends nothing.
TEST_F(MuonShipTls, AClientWithoutACertificateIsToldWhyOnce) {
  ShipProcess ship(work_, {"--tls-ca", certs_.file("ca.pem"), "--relp",
                           "127.0.0.1:" + std::to_string(daemon_.relpPort()), "--state",
                           work_.file("state"), logs_.file("app")});
  const std::string refusal = "muon-ship: RELP: TLS refused: tlsv13 alert certificate required\n";
  EXPECT_TRUE(waitForErr(ship, refusal, seconds(10))) << ship.err();
  // Several more attempts (four a second) inside the report interval;
  // killed, as a SIGTERM would wait for acknowledgements that never come.
  std::this_thread::sleep_for(milliseconds(1500));
  ship.signal(SIGKILL);
  EXPECT_EQ(ship.err(), refusal);
  EXPECT_TRUE(daemon_.received(kApp).empty());
}

TEST(MuonShipDaemonDown, TheDaemonDownAtStartGetsEveryLineWhenItComes) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why), why);
  TempDir logs, work;
  appendTo(logName(logs, 0), shipLines(0, 5000));
  ShipProcess ship(work, {"--relp", "127.0.0.1:" + std::to_string(daemon.relpPort()), "--state",
                          work.file("state"), logs.file("app")});
  std::this_thread::sleep_for(seconds(fullScale() ? 10 : 3));
  ASSERT_TRUE(daemon.start(&why)) << why;
  const auto up = std::chrono::steady_clock::now();
  ASSERT_TRUE(waitAll(daemon, 5000, seconds(20))) << ship.err();
  std::printf("daemon down at start: every line arrived %lld ms after it came up\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(
                                         std::chrono::steady_clock::now() - up).count()));
  EXPECT_EQ(0, ship.signal(SIGTERM)) << ship.err();
  uint64_t shipped, resent, skipped;
  ASSERT_TRUE(finalLine(ship.out(), &shipped, &resent, &skipped)) << "stdout: " << ship.out();
  EXPECT_EQ(5000u, shipped);
}

// The lines of `text` (each ends with '\n').
std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  for (size_t end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
    lines.push_back(text.substr(begin, end - begin));
  }
  return lines;
}

// The outage: the daemon killed while muon-ship runs and back 16 s
// later costs at most 5 lines of stderr, at the default report interval
// (10 s). At full scale that is what runs; otherwise the same ratio at a
// 2 s interval (--report-interval 2, the daemon away 3.2 s), which takes
// the attempts (four a second) through one interval as well.
TEST(MuonShipDaemonDown, AnOutageCostsAtMostFiveLinesOfStderr) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why) && daemon.start(&why), why);
  TempDir logs, work;
  appendTo(logName(logs, 0), shipLines(0, 100));
  std::vector<std::string> args = {"--relp", "127.0.0.1:" + std::to_string(daemon.relpPort()),
                                   "--state", work.file("state"), logs.file("app")};
  const bool full = fullScale();
  if (!full) args.insert(args.begin(), {"--report-interval", "2"});
  const milliseconds down(full ? 16000 : 3200);
  ShipProcess ship(work, args);
  ASSERT_TRUE(waitAll(daemon, 100, seconds(20))) << ship.err();
  daemon.kill();
  std::this_thread::sleep_for(down);
  ASSERT_TRUE(daemon.start(&why)) << why;
  appendTo(logName(logs, 0), shipLines(100, 200));
  ASSERT_TRUE(waitAll(daemon, 200, seconds(20))) << ship.err();
  EXPECT_EQ(0, ship.signal(SIGTERM)) << ship.err();
  const std::string err = ship.err();
  const std::vector<std::string> lines = linesOf(err);
  std::printf("daemon away %lld ms: %zu lines of stderr\n%s", static_cast<long long>(down.count()),
              lines.size(), err.c_str());
  EXPECT_LE(lines.size(), 5u) << err;
  ASSERT_GE(lines.size(), 3u) << err;
  // The first failure as it came; then one with the count and the time down
  // (the attempts went on through a whole interval); then the return.
  EXPECT_EQ(lines.front().rfind("muon-ship: RELP: connection lost: ", 0), 0u) << err;
  EXPECT_NE(err.find(" failures in "), std::string::npos) << err;
  EXPECT_NE(err.find(", still trying)"), std::string::npos) << err;
  EXPECT_EQ(lines.back().rfind("muon-ship: RELP: session open again after ", 0), 0u) << err;
}

TEST_F(MuonShipTest, SigtermWithNothingToShipPrintsOneLineAndExitsZero) {
  MUON_REQUIRE_RELP_OR_SKIP(ready_, why_);
  ShipProcess ship(work_, args());
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(0, ship.signal(SIGTERM)) << ship.err();
  EXPECT_EQ("shipped 0 lines, resent 0, skipped 0\n", ship.out());
}

// A crash-safe producer in a child process: logs shipLine(i) for i in
// [from, to) through AsyncLogging (crashSafe, kBlock), publishing in
// *committed how many have been appended (so a restart after SIGKILL goes on
// from there; the line being appended at the kill may come twice). It
// pauses `pauseUs` after every 200 lines, to span the run's events.
pid_t startProducer(const std::string& basename, uint64_t from, uint64_t to,
                    std::atomic<uint64_t>* committed, useconds_t pauseUs) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  muon::AsyncLogging::Options options;
  options.crashSafe = true;
  options.policy = muon::AsyncLogging::kBlock;
  options.flushInterval = 1;
  muon::AsyncLogging log(basename, 2 << 20, options);
  log.start();
  for (uint64_t i = from; i < to; ++i) {
    const std::string line = muon::test::shipLine(i);
    log.append(line.data(), line.size());
    committed->store(i + 1);
    if (i % 200 == 199) ::usleep(pauseUs);
  }
  log.stop();
  ::_exit(0);
}

// The number of lines in rsyslogd's output file: a cheap test before the
// whole file is parsed.
size_t outputLines(const Rsyslogd& daemon) {
  std::ifstream in(daemon.dir().file("out.log"), std::ios::binary);
  char buf[1 << 16];
  size_t lines = 0;
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    lines += static_cast<size_t>(std::count(buf, buf + in.gcount(), '\n'));
  }
  return lines;
}

// The fault run: 1,000,000 lines at full scale (MUON_SHIP_FULL_SCALE=1,
// at most about 28,000 lines a second produced, events every 1.5 s), else 200,000
// (about 6,500 a second, events every 0.6 s), from a crash-safe producer,
// while rsyslogd is killed 10 times (back after 0.2-1 s), muon-ship 5 times
// (while the daemon is down) and the producer 5 times.
TEST_F(MuonShipTest, FaultRunKillsOfDaemonShipperAndProducerLoseNothing) {
  MUON_REQUIRE_RELP_OR_SKIP(ready_, why_);
  const bool full = fullScale();
  const uint64_t total = full ? 1000000 : 200000;
  const useconds_t pauseUs = full ? 7000 : 30000;
  const milliseconds between(full ? 1500 : 600);
  const uint64_t window = 128;
  auto* committed = static_cast<std::atomic<uint64_t>*>(
      ::mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(MAP_FAILED, static_cast<void*>(committed));
  new (committed) std::atomic<uint64_t>(0);
  const std::string basename = logs_.file("app");
  const auto began = std::chrono::steady_clock::now();
  pid_t producer = startProducer(basename, 0, total, committed, pauseUs);
  ASSERT_GT(producer, 0);
  auto ship = std::make_unique<ShipProcess>(work_, args(std::to_string(window)), "ship0");
  int daemonKills = 0, shipKills = 0, producerKills = 0;
  // Events every `between`, three kinds in turn: the daemon alone; the daemon
  // and, while it is down (lines handed to the client but not acknowledged),
  // muon-ship; the producer.
  for (int step = 0; step < 15; ++step) {
    std::this_thread::sleep_for(between);
    if (step % 3 != 2) {
      daemon_.kill();
      ++daemonKills;
      if (step % 3 == 1) {
        std::this_thread::sleep_for(milliseconds(300));
        ship->signal(SIGKILL);
        ship = std::make_unique<ShipProcess>(work_, args(std::to_string(window)),
                                             "ship" + std::to_string(++shipKills));
      }
      std::this_thread::sleep_for(milliseconds(200 + 50 * step));
      std::string why;
      ASSERT_TRUE(daemon_.start(&why)) << why;
    } else {
      if (producer <= 0) continue;  // finished: there is no producer to kill
      int status = 0;
      if (::waitpid(producer, &status, WNOHANG) == producer) {
        producer = -1;  // it finished before its kill: not counted as one
        continue;
      }
      ::kill(producer, SIGKILL);
      ::waitpid(producer, &status, 0);
      producer = -1;
      ++producerKills;
      // A new second, so that the new producer's files sort after the dead one's.
      std::this_thread::sleep_for(milliseconds(1100));
      if (committed->load() < total) {
        producer = startProducer(basename, committed->load(), total, committed, pauseUs);
        ASSERT_GT(producer, 0);
      }
    }
  }
  if (producer > 0) {
    int status = 0;
    ::waitpid(producer, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
  }
  EXPECT_EQ(total, committed->load());
  ::munmap(committed, sizeof(std::atomic<uint64_t>));
  const auto deadline = std::chrono::steady_clock::now() + seconds(120);
  while (outputLines(daemon_) < total && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(waitAll(daemon_, total, seconds(20))) << ship->err();
  const auto took = std::chrono::steady_clock::now() - began;
  // Everything arrived: muon-ship has nothing in flight once it has read the rest.
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(0, ship->signal(SIGTERM)) << ship->err();
  uint64_t shipped, resent, skipped;
  ASSERT_TRUE(finalLine(ship->out(), &shipped, &resent, &skipped)) << "stdout: " << ship->out();
  // The files also hold the recoveries' own lines ("Recovered N lines of
  // pid P ..."), shipped like the others.
  std::vector<std::string> others;
  const auto seen = shipArrivals(daemon_, kApp, &others);
  uint64_t arrived = others.size();
  for (const auto& [n, count] : seen) arrived += static_cast<uint64_t>(count);
  for (const std::string& line : others) {
    EXPECT_NE(line.find("Recovered "), std::string::npos) << line;
  }
  // The files hold each line once, plus at most one per producer kill and
  // one recovery line per kill; muon-ship shipped (acknowledged) exactly
  // what the files hold.
  EXPECT_GE(shipped, total);
  EXPECT_LE(shipped, total + 2 * static_cast<uint64_t>(producerKills));
  // What arrived beyond that are muon-ship's duplicates: counted in resent,
  // and at most a window per broken session or restart.
  ASSERT_GE(arrived, shipped);
  EXPECT_LE(arrived - shipped, resent);
  EXPECT_LE(resent, window * static_cast<uint64_t>(2 * daemonKills + shipKills));
  EXPECT_EQ(0u, skipped);
  EXPECT_EQ(10, daemonKills);
  EXPECT_EQ(5, shipKills);
  EXPECT_EQ(5, producerKills);
  uint64_t lost = 0;
  for (uint64_t n = 0; n < total; ++n) lost += seen.count(n) == 0 ? 1 : 0;
  std::printf("fault run: %llu lines, every line arrived after %lld s; %llu lost, %llu duplicates, "
              "resent %llu, %llu lines in the files\n",
              static_cast<unsigned long long>(total),
              static_cast<long long>(std::chrono::duration_cast<seconds>(took).count()),
              static_cast<unsigned long long>(lost), static_cast<unsigned long long>(arrived - shipped),
              static_cast<unsigned long long>(resent), static_cast<unsigned long long>(shipped));
}

TEST(MuonShipUsage, BadInputSaysWhatAndExitsTwo) {
  TempDir dir;
  {
    ShipProcess ship(dir, {"--relp", "localhost:notaport", "--state", dir.file("s"), dir.file("app")});
    EXPECT_EQ(2, ship.wait(seconds(10)));
    EXPECT_NE(std::string::npos, ship.err().find("bad --relp 'localhost:notaport'")) << ship.err();
  }
  {
    // A host the resolver does not know: said so, with the resolver's reason
    // (which varies: "Name or service not known", or without DNS "Temporary
    // failure in name resolution").
    ShipProcess ship(dir, {"--relp", "nosuchhost.invalid:34707", "--state", dir.file("s2"),
                           dir.file("app")});
    EXPECT_EQ(2, ship.wait(seconds(30)));
    const std::string said = "muon-ship: bad --relp 'nosuchhost.invalid:34707': host "
                             "'nosuchhost.invalid' could not be resolved: ";
    EXPECT_EQ(0u, ship.err().rfind(said, 0)) << ship.err();
    EXPECT_GT(ship.err().size(), said.size() + 1) << "no reason: " << ship.err();
    EXPECT_EQ(std::string::npos, ship.err().find("want HOST:PORT")) << ship.err();
  }
  {
    appendTo(dir.file("s"), "not a state\n");
    ShipProcess ship(dir, {"--relp", "127.0.0.1:1", "--state", dir.file("s"), dir.file("app")});
    EXPECT_EQ(2, ship.wait(seconds(10)));
    EXPECT_NE(std::string::npos, ship.err().find("is not a muon-ship state")) << ship.err();
  }
  {
    ShipProcess ship(dir, {"--relp", "127.0.0.1:1", "--state", dir.path(), dir.file("app")});
    EXPECT_EQ(2, ship.wait(seconds(10)));
    EXPECT_NE(std::string::npos, ship.err().find("cannot read state file")) << ship.err();
  }
  {
    ShipProcess ship(dir, {"--help"});
    EXPECT_EQ(0, ship.wait(seconds(10)));
    EXPECT_NE(std::string::npos, ship.out().find("usage: muon-ship")) << ship.out();
  }
}

}  // namespace
