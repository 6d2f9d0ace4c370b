// Every program of the book's examples refuses a bad command line with a
// usage text and exit status 2, before doing anything else; and every
// program of examples/ and base/tools (and muon-ship) answers --help with
// its usage on stdout and status 0, while a bad flag still gets it on
// stderr and status 2.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "TempDir.h"

using muon::test::ChildProgram;

namespace {

struct Case {
  std::string program;
  std::vector<std::string> args;
};

}  // namespace

TEST(BookExamples, BadCommandLinesGetUsageAndStatus2) {
  const std::vector<Case> cases = {
      {"simple_server", {}}, {"simple_server", {"65533"}}, {"simple_server", {"0", "1"}},
      {"finger_server", {}}, {"finger_server", {"0", "noequals"}}, {"finger_server", {"0", "=plan"}},
      {"chat_server", {"x"}}, {"chat_server", {"0", "1"}},
      {"chat_server_threaded", {"0"}}, {"chat_server_threaded", {"0", "0"}},
      {"chat_client", {"127.0.0.1"}}, {"chat_client", {"localhost", "80"}}, {"chat_client", {"127.0.0.1", "0"}},
      {"idle_server", {"0", "0"}}, {"idle_server", {"0", "8s"}},
      {"maxconn_server", {"0"}}, {"maxconn_server", {"0", "0"}},
      {"download_server", {"0"}}, {"download_server", {"0", "f", "1"}},
      {"sudoku_server", {"0", "0", "0"}}, {"sudoku_server", {"-1"}},
      {"sudoku_server", {"0", "0", "1", "0"}}, {"sudoku_server", {"0", "0", "1", "1", "1"}},
      {"socks4a_server", {"0", "1"}}, {"socks4a_server", {}}, {"socks4a_server", {"0", "256", "0"}},
      {"roundtrip", {"-s"}}, {"roundtrip", {"127.0.0.1", "0"}}, {"roundtrip", {"nohost", "80"}},
      {"roundtrip", {"127.0.0.1", "80", "0"}},
  };
  for (const Case& c : cases) {
    ChildProgram program(c.program, c.args);
    std::string line = c.program;
    for (const std::string& a : c.args) line += " '" + a + "'";
    EXPECT_EQ(program.wait(), 2) << line;
    EXPECT_NE(program.output().find("Usage"), std::string::npos) << line;
  }
}

namespace {

// Runs `program args` with stdout and stderr into files of `dir`: the exit
// status (-1 if it did not exit).
int runTo(const std::string& program, const std::string& args, const muon::test::TempDir& dir) {
  const std::string command = "'" + program + "' " + args + " >'" + dir.file("out") + "' 2>'" +
                              dir.file("err") + "' </dev/null";
  const int status = std::system(command.c_str());
  return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool mentionsUsage(const std::string& text) {
  return text.find("Usage") != std::string::npos || text.find("usage") != std::string::npos;
}

}  // namespace

TEST(Programs, HelpPrintsUsageOnStdoutAndExitsZeroABadFlagStillExitsTwo) {
  // The book's programs are built with this test; the others are checked
  // where this configuration builds them (Boost, OpenSSL, zstd, rsyslog
  // parts may be absent). hello, hello_net and log_instructions take no
  // arguments; log_microbench and log_matrix take Google Benchmark's.
  const std::vector<std::string> always = {
      "simple_server", "finger_server", "chat_server", "chat_server_threaded", "chat_client",
      "idle_server", "maxconn_server", "download_server", "sudoku_server", "socks4a_server",
      "roundtrip"};
  const std::vector<std::string> whereBuilt = {
      "echo_server", "http_hello_server", "http_floor_server", "beast_hello_server",
      "inspect_server", "pingpong_server", "pingpong_client", "asio_pingpong_server",
      "asio_pingpong_client", "pingpong_server_uring", "pingpong_client_uring",
      "epoll_pingpong_server", "epoll_pingpong_client", "tls_echo_server", "tls_load", "soak",
      "relp_flood", "ship_latency", "ship_bench_probe", "logbench", "log_latency", "muon-logcat",
      "muon-recover", "muon-ship"};
  muon::test::TempDir dir;
  int checked = 0;
  auto check = [&](const std::string& name, bool required) {
    const std::string path = std::string(MUON_EXAMPLES_BIN_DIR) + "/" + name;
    if (::access(path.c_str(), X_OK) != 0) {
      EXPECT_FALSE(required) << name << " is not built";
      return;
    }
    ++checked;
    EXPECT_EQ(runTo(path, "--help", dir), 0) << name << " --help";
    EXPECT_TRUE(mentionsUsage(muon::test::readFile(dir.file("out")))) << name << " --help: stdout";
    EXPECT_EQ(muon::test::readFile(dir.file("err")), "") << name << " --help: stderr";
    EXPECT_EQ(runTo(path, "--no-such-flag", dir), 2) << name << " --no-such-flag";
    EXPECT_TRUE(mentionsUsage(muon::test::readFile(dir.file("err")))) << name << " --no-such-flag";
  };
  for (const std::string& name : always) check(name, true);
  for (const std::string& name : whereBuilt) check(name, false);
  std::printf("--help checked in %d programs\n", checked);
}
