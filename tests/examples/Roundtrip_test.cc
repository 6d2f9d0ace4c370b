// roundtrip: the client against the server on one machine prints COUNT
// measurements, each with |clock offset| <= round trip / 2 (one clock).
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "PosixRegex.h"

using muon::test::ChildProgram;
using muon::test::PosixRegex;

TEST(Roundtrip, MeasuresAgainstItsServer) {
  ChildProgram server("roundtrip", {"-s", "0"});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  ChildProgram client("roundtrip", {"127.0.0.1", std::to_string(port), "5"});
  ASSERT_EQ(client.wait(), 0) << client.output();
  const PosixRegex line("round trip ([0-9]+) us, clock offset (-?[0-9]+) us");
  int measurements = 0;
  const std::string out = client.output();
  size_t start = 0;
  for (size_t end; (end = out.find('\n', start)) != std::string::npos; start = end + 1) {
    std::vector<std::string> groups;
    if (!line.fullMatch(out.substr(start, end - start), &groups)) continue;
    ++measurements;
    const long rtt = std::atol(groups[1].c_str()), offset = std::atol(groups[2].c_str());
    EXPECT_GT(rtt, 0);
    EXPECT_LE(std::labs(offset), rtt / 2 + 1) << out.substr(start, end - start);
  }
  EXPECT_EQ(measurements, 5) << out;
  EXPECT_TRUE(server.stopsCleanly());
}
