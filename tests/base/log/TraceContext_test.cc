// TraceContext: W3C traceparent parsed and formatted as the specification
// says, and TraceScope's fields on the lines logged inside it.
#include "muon/base/TraceContext.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "OutputCapture.h"
#include "muon/base/Logging.h"

namespace {

using muon::TraceContext;

constexpr const char* kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContext, AValidHeaderIsReadAndWrittenBack) {
  TraceContext t;
  ASSERT_TRUE(TraceContext::parse(kValid, &t));
  EXPECT_EQ(t.traceId(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(t.spanId(), "00f067aa0ba902b7");
  EXPECT_EQ(t.flags(), 1);
  EXPECT_TRUE(t.sampled());
  EXPECT_EQ(t.traceparent(), kValid);
  // HTTP's optional white space around a field value.
  ASSERT_TRUE(TraceContext::parse(std::string(" \t") + kValid + " ", &t));
  EXPECT_EQ(t.traceparent(), kValid);
  ASSERT_TRUE(TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-fe", &t));
  EXPECT_EQ(t.flags(), 0xfe);
  EXPECT_FALSE(t.sampled());
}

TEST(TraceContext, InvalidHeadersAreIgnoredAndLeaveTheContextAsItWas) {
  const std::vector<std::string> invalid = {
      "",
      "00",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0F",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // all-zero trace-id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // all-zero parent-id
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
      "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",  // 00 has nothing after
      "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",   // a dash misplaced
      "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-701",
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",  // later version, no dash
      std::string(kValid) + ", " + kValid,                         // the field sent twice
  };
  TraceContext t;
  ASSERT_TRUE(TraceContext::parse(kValid, &t));
  for (const std::string& h : invalid) {
    EXPECT_FALSE(TraceContext::parse(h, &t)) << h;
    EXPECT_EQ(t.traceparent(), kValid) << h;
  }
  // A later version is read by its first four fields.
  ASSERT_TRUE(TraceContext::parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what", &t));
  EXPECT_EQ(t.traceId(), "4bf92f3577b34da6a3ce929d0e0e4736");
  ASSERT_TRUE(TraceContext::parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &t));
}

TEST(TraceContext, AChildIsANewSpanOfTheSameTrace) {
  TraceContext t;
  ASSERT_TRUE(TraceContext::parse(kValid, &t));
  const TraceContext c = t.child();
  EXPECT_EQ(c.traceId(), t.traceId());
  EXPECT_EQ(c.flags(), t.flags());
  EXPECT_NE(c.spanId(), t.spanId());
  TraceContext back;
  ASSERT_TRUE(TraceContext::parse(c.traceparent(), &back)) << c.traceparent();
  EXPECT_NE(t.child().spanId(), c.spanId());
  const TraceContext fresh = TraceContext::newTrace(1);
  ASSERT_TRUE(TraceContext::parse(fresh.traceparent(), &back)) << fresh.traceparent();
  EXPECT_NE(fresh.traceId(), TraceContext::newTrace().traceId());
}

TEST(TraceScope, PutsTheIdsOnTheLinesLoggedInside) {
  TraceContext t;
  ASSERT_TRUE(TraceContext::parse(kValid, &t));
  const std::vector<std::string> lines = muon::test::linesWrittenToOutput([&] {
    {
      muon::TraceScope scope(t);
      LOG_INFO << "inside";
    }
    LOG_INFO << "outside";
  });
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(" inside trace.id=4bf92f3577b34da6a3ce929d0e0e4736 span.id=00f067aa0ba902b7 - "),
            std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[1].find("trace.id"), std::string::npos) << lines[1];
}

}  // namespace
