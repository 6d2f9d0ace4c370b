// Inspector's /metrics: valid text exposition format 0.0.4 line by line
// (Exposition.h), counters that only grow, and the counters it promises
// moving with real work: log lines through an AsyncLogging, bytes and
// connections through an echo server on its own loop. The pages and the
// level change over curl are in tests/examples/inspect_test.sh.
#include "muon/net/inspect/Inspector.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "Exposition.h"
#include "NetTestUtil.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/JournaldSink.h"
#include "muon/base/Logging.h"
#include "muon/base/SyslogSink.h"
#include "muon/net/EventLoopThread.h"
#include "muon/net/TcpServer.h"
#include "muon/net/inspect/MetricsWriter.h"

using muon::net::test::Exposition;

namespace muon {
namespace net {
namespace {

// GET `path` over a fresh connection; the whole answer, head and body.
std::string httpGet(const InetAddress& addr, const std::string& path) {
  const int fd = test::connectTo(addr);
  EXPECT_GE(fd, 0);
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  EXPECT_TRUE(test::writeAll(fd, request.data(), request.size()));
  std::string answer;
  char buf[65536];
  while (test::waitReadable(fd, 20000)) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return answer;
}

std::string bodyOf(const std::string& answer) {
  const size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

TEST(ExpositionTest, CatchesWhatABrokenPageGetsWrong) {
  const std::string good =
      "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 3\n"
      "# HELP g G.\n# TYPE g gauge\ng 0.5\n";
  EXPECT_TRUE(Exposition().check(good).empty());
  const char* const bad[] = {
      "a_total 1\n# HELP a_total A.\n# TYPE a_total counter\n",  // sample first
      "# HELP a_total A.\n# TYPE a_total counter\nb_total 1\n",  // another family's
      "# TYPE a_total counter\n# HELP a_total A.\na_total 1\n",  // TYPE before HELP
      "# HELP a A.\n# TYPE a counter\na 1\n",                    // counter without _total
      "# HELP 1a A.\n# TYPE 1a gauge\n1a 1\n",                   // bad name
      "# HELP a A.\n# TYPE a gauge\na{1x=\"v\"} 1\n",            // bad label name
      "# HELP a A.\n# TYPE a gauge\na{x=\"v\"\"} 1\n",           // unescaped quote
      "# HELP a A.\n# TYPE a gauge\na one\n",                    // not a number
      "# HELP a A.\n# TYPE a gauge\na 1",                        // no final line feed
      "# HELP a A.\n# TYPE a gauge\na 1\na 2\n",                 // a series twice
  };
  for (const char* text : bad) EXPECT_FALSE(Exposition().check(text).empty()) << text;
}

TEST(MetricsWriterTest, EscapesLabelValuesAndHelpAsTheFormatSays) {
  MetricsWriter out;
  out.family("m_total", MetricsWriter::kCounter, "back\\slash and\nline");
  out.sample({{"path", "a\"b\\c\nd"}}, uint64_t{7});
  out.family("g", MetricsWriter::kGauge, "g");
  out.sample({}, 0.25);
  EXPECT_EQ(out.text(),
            "# HELP m_total back\\\\slash and\\nline\n# TYPE m_total counter\n"
            "m_total{path=\"a\\\"b\\\\c\\nd\"} 7\n# HELP g g\n# TYPE g gauge\ng 0.25\n");
  EXPECT_TRUE(Exposition().check(out.text()).empty());
  EXPECT_TRUE(MetricsWriter::validMetricName("muon_net_bytes_received_total"));
  EXPECT_FALSE(MetricsWriter::validMetricName("muon-net"));
  EXPECT_FALSE(MetricsWriter::validLabelName("__name"));
}

class InspectorMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = std::make_unique<AsyncLogging>(dir_.file("inspected"), 1L << 30, 1);
    log_->start();
    attached_ = Logger::attach(*log_);
    echoLoop_ = echoThread_.startLoop();
    echo_ = test::runSync(echoLoop_, [this] {
      auto server = std::make_unique<TcpServer>(echoLoop_, test::loopback(0), "echo");
      server->setMessageCallback(test::echo);
      server->start();
      return server;
    });
    inspectorLoop_ = inspectorThread_.startLoop();
    inspector_ = test::runSync(inspectorLoop_, [this] {
      auto ins = std::make_unique<Inspector>(inspectorLoop_, Inspector::loopback(0), "inspector");
      ins->addLogging(*log_, "test");
      ins->start();
      return ins;
    });
  }
  void TearDown() override {
    test::runSync(inspectorLoop_, [this] { inspector_.reset(); });
    test::runSync(echoLoop_, [this] { echo_.reset(); });
    attached_.detach();
    log_->stop();
  }

  // One page, checked; its samples.
  std::map<std::string, double> scrape() {
    const std::string answer = httpGet(inspector_->listenAddress(), "/metrics");
    EXPECT_NE(answer.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << answer.substr(0, 200);
    EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos);
    Exposition page;
    for (const std::string& e : page.check(bodyOf(answer))) ADD_FAILURE() << e;
    types_ = page.types;
    return page.samples;
  }

  // Sends `bytes` bytes through the echo server and reads them back.
  void echoBytes(size_t bytes) {
    const int fd = test::connectTo(echo_->listenAddress());
    ASSERT_GE(fd, 0);
    const std::string data = test::makePattern(bytes);
    ASSERT_TRUE(test::writeAll(fd, data.data(), data.size()));
    EXPECT_EQ(test::readExactly(fd, bytes), data);
    ::close(fd);
  }

  // The echo loop's series of `family`.
  std::string echoSeries(std::map<std::string, double>& s, const std::string& family) {
    for (const auto& [series, value] : s) {
      if (series.rfind(family + "{", 0) == 0 && series.find("loop=\"" + echoThread_.name()) != std::string::npos)
        return series;
    }
    return "";
  }

  muon::test::TempDir dir_;
  std::unique_ptr<AsyncLogging> log_;
  LogAttachment attached_;
  EventLoopThread echoThread_{EventLoopThread::ThreadInitCallback(), "echoloop"};
  EventLoop* echoLoop_ = nullptr;
  std::unique_ptr<TcpServer> echo_;
  EventLoopThread inspectorThread_{EventLoopThread::ThreadInitCallback(), "inspectloop"};
  EventLoop* inspectorLoop_ = nullptr;
  std::unique_ptr<Inspector> inspector_;
  std::map<std::string, std::string> types_;
};

TEST_F(InspectorMetricsTest, PageIsValidCountersOnlyGrowAndTheWorkShows) {
  std::map<std::string, double> before = scrape();
  for (const char* name : {"muon_log_lines_written_total", "muon_log_lines_dropped_total",
                           "muon_log_lines_truncated_total",
                           "muon_net_bytes_received_total", "muon_net_bytes_sent_total",
                           "muon_net_connections_accepted_total", "muon_net_connections_open",
                           "muon_net_loop_iterations_total", "muon_net_loop_busy_seconds_total"}) {
    EXPECT_EQ(types_.count(name), 1u) << name;
  }

  for (int i = 0; i < 100; ++i) LOG_INFO << "inspected line " << i;
  LOG_INFO << std::string(5000, 'x') << kv("cut", 1);  // cut to fit: counted
  log_->flush();
  echoBytes(100000);
  std::map<std::string, double> after;
  // The echo loop counts the connection's close when it destroys it, soon
  // after the client's close.
  ASSERT_TRUE(test::waitFor([&] {
    after = scrape();
    const std::string open = echoSeries(after, "muon_net_connections_open");
    return !open.empty() && after[open] == 0;
  }));

  for (const auto& [series, value] : before) {
    const std::string family = series.substr(0, series.find('{'));
    if (types_[family] != "counter") continue;
    ASSERT_EQ(after.count(series), 1u) << series;  // the same loops and sinks
    EXPECT_GE(after[series], value) << series << " went back";
  }
  const std::string written = "muon_log_lines_written_total{sink=\"test\"}";
  EXPECT_GE(after[written] - before[written], 100) << written;
  EXPECT_GE(after["muon_log_lines_truncated_total"] - before["muon_log_lines_truncated_total"], 1);
  const std::string stats = bodyOf(httpGet(inspector_->listenAddress(), "/log/stats"));
  EXPECT_NE(stats.find("\nlogger lines_truncated " + std::to_string(Logger::linesTruncated()) + "\n"),
            std::string::npos)
      << stats;
  const std::string received = echoSeries(after, "muon_net_bytes_received_total");
  const std::string sent = echoSeries(after, "muon_net_bytes_sent_total");
  ASSERT_FALSE(received.empty());
  EXPECT_EQ(after[received] - before[received], 100000);
  EXPECT_EQ(after[sent] - before[sent], 100000);
  const std::string accepted = echoSeries(after, "muon_net_connections_accepted_total");
  EXPECT_EQ(after[accepted] - before[accepted], 1);
  const std::string iterations = echoSeries(after, "muon_net_loop_iterations_total");
  EXPECT_GT(after[iterations], before[iterations]);
  const std::string busy = echoSeries(after, "muon_net_loop_busy_seconds_total");
  EXPECT_GT(after[busy], before[busy]);
}

// A SyslogSink registered with addSyslog: its messages sent are the sink's
// lines written, on /metrics and /log/stats alike; removed, it is gone from both.
TEST_F(InspectorMetricsTest, SyslogSinkCountersShowUntilRemoved) {
  // A UDP socket of our own stands in for the daemon.
  const int daemon = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(daemon, 0);
  InetAddress bound(0, true);
  ASSERT_EQ(::bind(daemon, bound.getSockAddr(), sizeof(struct sockaddr_in)), 0);
  struct sockaddr_in addr {};
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(daemon, reinterpret_cast<struct sockaddr*>(&addr), &len), 0);
  SyslogOptions options;
  options.transport = SyslogOptions::kUdp;
  options.port = ntohs(addr.sin_port);
  {
    SyslogSink sink(options);
    inspector_->addSyslog(sink, "udp");
    for (int i = 0; i < 5; ++i) sink.append("to syslog\n", 10);
    sink.flush();
    std::map<std::string, double> page = scrape();
    EXPECT_EQ(page["muon_log_lines_written_total{sink=\"udp\"}"], 5);
    EXPECT_EQ(page.count("muon_log_lines_dropped_total{sink=\"udp\",cause=\"queue_full\"}"), 1u);
    EXPECT_EQ(page.count("muon_log_lines_lost_total{sink=\"udp\",cause=\"send_failed\"}"), 1u);
    const std::string stats = bodyOf(httpGet(inspector_->listenAddress(), "/log/stats"));
    EXPECT_NE(stats.find("udp sent 5\n"), std::string::npos) << stats;
    EXPECT_NE(stats.find("test lines_written "), std::string::npos) << stats;
    inspector_->removeSyslog(sink);
  }
  EXPECT_EQ(scrape().count("muon_log_lines_written_total{sink=\"udp\"}"), 0u);
  ::close(daemon);
}

// A JournaldSink registered with addJournald: with no journald there, its
// lines show as lost (send_failed) on /metrics and /log/stats.
TEST_F(InspectorMetricsTest, JournaldSinkCountsItsLostLines) {
  muon::JournaldOptions options;
  options.socketPath = "/nonexistent/journal-socket";
  ::testing::internal::CaptureStderr();  // its note of the outage
  {
    muon::JournaldSink sink(options);
    inspector_->addJournald(sink);
    for (int i = 0; i < 3; ++i) sink.append("to journald\n", 12);
    sink.flush();
    std::map<std::string, double> page = scrape();
    EXPECT_EQ(page["muon_log_lines_written_total{sink=\"journald\"}"], 0);
    EXPECT_EQ(page["muon_log_lines_lost_total{sink=\"journald\",cause=\"send_failed\"}"], 3);
    EXPECT_EQ(page.count("muon_log_lines_dropped_total{sink=\"journald\",cause=\"queue_full\"}"), 1u);
    const std::string stats = bodyOf(httpGet(inspector_->listenAddress(), "/log/stats"));
    EXPECT_NE(stats.find("journald lost 3\njournald outages 1\n"), std::string::npos) << stats;
    inspector_->removeJournald(sink);
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(scrape().count("muon_log_lines_lost_total{sink=\"journald\",cause=\"send_failed\"}"), 0u);
}

}  // namespace
}  // namespace net
}  // namespace muon
