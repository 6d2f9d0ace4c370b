// examples/rsyslog/muon-imfile.conf, the rsyslog configuration
// docs/logging.md gives for shipping muon's rolling files: rsyslogd (started
// by the test, tests/support/Rsyslogd.h) reads the files of an AsyncLogging
// that rolls several times while it runs, and every line arrives once.
// Label syslog; skipped, saying why, where rsyslogd cannot run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "Rsyslogd.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"

using muon::AsyncLogging;
using muon::Logger;
using muon::test::Rsyslogd;
using muon::test::TempDir;

namespace {

// The shipped configuration, with its example directory replaced by `dir`.
std::string imfileConfig(const std::string& dir) {
  std::ifstream in(std::string(MUON_SOURCE_DIR) + "/examples/rsyslog/muon-imfile.conf");
  std::stringstream text;
  text << in.rdbuf();
  std::string conf = text.str();
  const std::string example = "/var/log/muon";
  for (size_t at = conf.find(example); at != std::string::npos; at = conf.find(example, at)) {
    conf.replace(at, example.size(), dir);
    at += dir.size();
  }
  return conf;
}

TEST(RsyslogImfile, EveryLineOfFilesRolledWhileItRunsArrivesOnce) {
  TempDir logs;
  Rsyslogd daemon;
  std::string conf = imfileConfig(logs.path());
  ASSERT_NE(conf.find(logs.path() + "/server.*.log*"), std::string::npos) << conf;
  daemon.addConfig(conf);
  std::string why;
  if (!daemon.start(&why)) GTEST_SKIP() << "no rsyslogd: " << why;

  constexpr int kLines = 4000;
  {
    // 32 KiB files: the 4000 lines of ~110 bytes roll about a dozen times.
    AsyncLogging log(logs.file("server"), 32 * 1024, 1);
    auto attached = Logger::attach(log);
    log.start();
    for (int i = 0; i < kLines; ++i) {
      LOG_INFO << "imfile seq=" << i << ' ' << std::string(60, 'x');
      if (i % 500 == 0) Logger::flush();  // files appear one by one, as rsyslogd watches
    }
  }
  ASSERT_GE(logs.files().size(), 5u) << "the files did not roll";

  ASSERT_TRUE(daemon.waitFor("muon-server", kLines, std::chrono::seconds(30)))
      << daemon.received("muon-server").size() << " of " << kLines;
  std::vector<int> seen(kLines, 0);
  for (const std::string& line : daemon.received("muon-server")) {
    EXPECT_EQ(line.rfind("6 ", 0), 0u) << line;  // Severity="info"
    size_t at = line.find("imfile seq=");
    ASSERT_NE(at, std::string::npos) << line;
    int seq = std::stoi(line.substr(at + 11));
    ASSERT_TRUE(seq >= 0 && seq < kLines) << line;
    ++seen[static_cast<size_t>(seq)];
  }
  for (int i = 0; i < kLines; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], 1) << "seq " << i;
}

}  // namespace
