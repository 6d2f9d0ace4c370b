// OutageReport: which of an outage's failures become lines, on a clock the
// test moves. The case: a RELP server away for 16 s while the
// client tries four times a second costs at most five lines at the default
// interval, and those lines say how many attempts failed and for how long.
#include "muon/net/relp/OutageReport.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "muon/net/relp/RelpClient.h"

using muon::net::relp::OutageReport;
using muon::net::relp::RelpClientOptions;

namespace {

const char kRefused[] = "connect failed: connect: Connection refused";

// An outage of `downMs`: the session lost at 0, then a refused attempt
// every 250 ms (RelpClient's back-off cap) from 250 ms on, then a session
// open. The lines
// printed, in order.
std::vector<std::string> outage(OutageReport* report, int64_t startMs, int64_t downMs) {
  std::vector<std::string> lines;
  auto keep = [&](const std::string& line) {
    if (!line.empty()) lines.push_back(line);
  };
  keep(report->failed(startMs, "connection lost: the connection went down"));
  for (int64_t t = 250; t < downMs; t += 250) keep(report->failed(startMs + t, kRefused));
  keep(report->recovered(startMs + downMs, "session open again"));
  return lines;
}

TEST(OutageReport, ASixteenSecondOutageAtTheDefaultIntervalCostsAtMostFiveLines) {
  OutageReport report(RelpClientOptions().reportIntervalMs);
  const std::vector<std::string> lines = outage(&report, 1000, 16000);
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  EXPECT_LE(lines.size(), 5u) << all;
  ASSERT_EQ(lines.size(), 3u) << all;
  // The first failure as it came, then the count and the time down, then the return.
  EXPECT_EQ(lines[0], "connection lost: the connection went down");
  EXPECT_EQ(lines[1], std::string(kRefused) + " (41 failures in 10.0 s, still trying)");
  EXPECT_EQ(lines[2], "session open again after 16.0 s down, 64 failures");
}

TEST(OutageReport, ALongOutageSaysSoOncePerIntervalAndANewOneStartsAfresh) {
  OutageReport report(2000);
  // An hour at four attempts a second: 14,400 failures, a line every 2 s.
  const std::vector<std::string> lines = outage(&report, 0, 3600 * 1000);
  EXPECT_EQ(lines.size(), 1u + 1799u + 1u);
  EXPECT_FALSE(report.down());
  EXPECT_EQ(report.recovered(3700 * 1000, "session open again"), "") << "nothing failed since";
  // The next outage's first failure is printed at once, and counted from 1.
  EXPECT_EQ(report.failed(3700 * 1000, kRefused), kRefused);
  EXPECT_TRUE(report.down());
  EXPECT_EQ(report.failed(3701 * 1000, kRefused), "");
  EXPECT_EQ(report.recovered(3701 * 1000 + 500, "session open again"),
            "session open again after 1.5 s down, 2 failures");
}

}  // namespace
