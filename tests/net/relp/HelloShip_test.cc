// examples/hello/hello_ship.cc, the README's shipper, run as a user runs it
// against a real rsyslogd with imrelp (tests/support/Rsyslogd.h): its two
// lines arrive with their levels and fields, it prints "shipped 2 lines" and
// exits 0. The program is the build's, or the one MUON_HELLO_SHIP names
// (the install test's, built from the installed tree with pkg-config alone).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ChildProcess.h"
#include "Rsyslogd.h"
#include "TempDir.h"

using muon::test::ChildResult;
using muon::test::readFile;
using muon::test::Rsyslogd;
using muon::test::runInChild;
using muon::test::TempDir;

namespace {

std::string program() {
  const char* other = std::getenv("MUON_HELLO_SHIP");
  return other && *other ? other : MUON_HELLO_SHIP_PATH;
}

}  // namespace

TEST(HelloShip, ShipsItsTwoLinesAndEndsOnceTheyAreAcknowledged) {
  Rsyslogd daemon;
  std::string why;
  MUON_REQUIRE_RELP_OR_SKIP(daemon.enableRelp(&why) && daemon.start(&why), why);
  TempDir work;
  const std::string path = program();
  const std::string address = "127.0.0.1:" + std::to_string(daemon.relpPort());
  // In `work`, as the program writes its log and state into the current directory.
  const ChildResult r = runInChild(work, [&] {
    if (::chdir(work.path().c_str()) != 0) ::_exit(101);
    if (std::freopen(work.file("stdout.txt").c_str(), "w", stdout) == nullptr) ::_exit(102);
    ::execl(path.c_str(), path.c_str(), address.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }, std::chrono::seconds(30));
  EXPECT_EQ(0, r.exitCode()) << path << ": " << r.stderrText;
  EXPECT_EQ("shipped 2 lines\n", readFile(work.file("stdout.txt")));
  const std::vector<std::string> got = daemon.received("hello_ship");
  ASSERT_EQ(2u, got.size()) << r.stderrText;
  // "SEVERITY MSG": info and warning, MSG the line after its date-time.
  EXPECT_NE(std::string::npos, got[0].find(" INFO  hello 42 over RELP - hello_ship.cc:")) << got[0];
  EXPECT_EQ(0u, got[0].find("6 ")) << got[0];
  EXPECT_NE(std::string::npos, got[1].find(" WARN  disk at 93.5% mount=/var - hello_ship.cc:"))
      << got[1];
  EXPECT_EQ(0u, got[1].find("4 ")) << got[1];
}
