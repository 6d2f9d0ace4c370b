#include "muon/base/LogAttachment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "LineCapture.h"
#include "StdoutCapture.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"

using muon::AsyncLogging;
using muon::LogAttachment;
using muon::Logger;
using muon::test::LineCapture;
using muon::test::stdoutDuring;
using muon::test::readLines;
using muon::test::TempDir;

namespace {

class LogAttachmentTest : public ::testing::Test {
 protected:
  void SetUp() override { Logger::setLogLevel(Logger::INFO); }
  void TearDown() override {
    Logger::setOutput(nullptr);
    Logger::setFlush(nullptr);
  }
};

TEST_F(LogAttachmentTest, LinesAndFlushesGoToTheSinkWhileAttached) {
  LineCapture sink;
  {
    auto attached = Logger::attach(sink);
    LOG_INFO << "to the sink";
    Logger::flush();
  }
  ASSERT_EQ(sink.lines().size(), 1u);
  EXPECT_NE(sink.lines()[0].find("to the sink"), std::string::npos);
  EXPECT_EQ(sink.flushes(), 1);
}

TEST_F(LogAttachmentTest, StdoutAgainWhenTheAttachmentEnds) {
  LineCapture sink;
  std::string out = stdoutDuring([&] {
    { auto attached = Logger::attach(sink); }
    LOG_INFO << "after the scope";
    Logger::flush();
  });
  EXPECT_TRUE(sink.lines().empty());
  EXPECT_EQ(sink.flushes(), 0);
  EXPECT_NE(out.find("after the scope"), std::string::npos) << out;
}

TEST_F(LogAttachmentTest, DetachIsIdempotentAndAMovedFromAttachmentDoesNothing) {
  LineCapture sink;
  LogAttachment outer;
  {
    auto attached = Logger::attach(sink);
    outer = std::move(attached);
  }  // the moved-from one ends here
  LOG_INFO << "still attached";
  outer.detach();
  outer.detach();
  std::string out = stdoutDuring([] { LOG_INFO << "detached"; });
  ASSERT_EQ(sink.lines().size(), 1u);
  EXPECT_NE(out.find("detached"), std::string::npos);
}

TEST_F(LogAttachmentTest, ANewerAttachmentIsNotUndoneByTheOlderOnesEnd) {
  LineCapture first;
  LineCapture second;
  auto a = Logger::attach(first);
  auto b = Logger::attach(second);
  a.detach();
  LOG_INFO << "to the second";
  ASSERT_EQ(second.lines().size(), 1u);
  EXPECT_TRUE(first.lines().empty());
}

// A plain output function into a capture: the test is of Logger::setOutput.
LineCapture* g_direct = nullptr;
void directOutput(const char* line, size_t len) { g_direct->append(line, len); }

TEST_F(LogAttachmentTest, SetOutputAfterAttachTakesOverAndSurvivesTheDetach) {
  LineCapture attachedSink;
  LineCapture direct;
  g_direct = &direct;
  {
    auto attached = Logger::attach(attachedSink);
    Logger::setOutput(&directOutput);
  }
  LOG_INFO << "direct";
  EXPECT_TRUE(attachedSink.lines().empty());
  EXPECT_EQ(direct.lines().size(), 1u);
}

// In crash-safe mode statements hand the sink recorded lines, a route of
// their own: setOutput takes that one over too.
TEST_F(LogAttachmentTest, SetOutputAfterAttachingACrashSafeSinkTakesOverItsLines) {
  TempDir dir;
  LineCapture direct;
  g_direct = &direct;
  {
    AsyncLogging::Options options;
    options.crashSafe = true;
    AsyncLogging log(dir.file("crashsafe"), 1L << 30, options);
    ASSERT_NE(log.recordedLineGate(), nullptr);
    auto attached = Logger::attach(log);
    log.start();
    Logger::setOutput(&directOutput);
    LOG_INFO << "direct";
    Logger::flush();
  }
  EXPECT_EQ(direct.count("direct"), 1u);
  for (const std::string& file : dir.files()) {
    if (file.find(".log") == std::string::npos) continue;
    for (const std::string& line : readLines(file)) {
      EXPECT_EQ(line.find("direct"), std::string::npos) << line;
    }
  }
}

TEST_F(LogAttachmentTest, AsyncLoggingWritesWhatWasLoggedWhileAttached) {
  TempDir dir;
  {
    AsyncLogging log(dir.file("attached"), 1L << 30);
    auto attached = Logger::attach(log);
    log.start();
    for (int i = 0; i < 100; ++i) LOG_INFO << "line " << i;
    Logger::flush();  // AsyncLogging::flush: in the file when it returns
    std::vector<std::string> files = dir.files();
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(readLines(files[0]).size(), 100u);
  }
}

}  // namespace
