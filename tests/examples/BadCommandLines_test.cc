// Every program of the book's examples refuses a bad command line with a
// usage text and exit status 2, before doing anything else.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ChildProgram.h"

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
