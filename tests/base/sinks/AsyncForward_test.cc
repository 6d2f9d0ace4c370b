// AsyncLogging::forward: the backend hands every line it writes to another
// sink as its record, statements staying deferred.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "RecordCapture.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/LogFields.h"
#include "muon/base/LogRecord.h"
#include "muon/base/Logging.h"

namespace {

using muon::AsyncLogging;
using muon::Logger;
using muon::test::TempDir;

using muon::test::Got;
using muon::test::RecordCapture;

class AsyncForwardTest : public ::testing::Test {
 protected:
  std::string basename() const { return dir_.file("forward"); }
  TempDir dir_;
  RecordCapture sink_;
};

TEST_F(AsyncForwardTest, DeferredStatementsReachTheSinkAsRecordsWithTheirFields) {
  AsyncLogging log(basename(), 1 << 30);
  auto forwarded = log.forward(sink_);
  auto attached = Logger::attach(log);
  log.start();
  LOG_INFO << "login" << muon::kv("user", "alice") << muon::kv("ms", 12);
  const int line = __LINE__ - 1;
  LOG_WARN << "disk full";
  log.flush();
  const std::vector<Got> t = sink_.records();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].level, Logger::INFO);
  EXPECT_EQ(t[0].message, "login user=alice ms=12");
  EXPECT_EQ(t[0].fields, " user=alice ms=12");
  // Taken apart by the backend's replay: a text line read back has none.
  ASSERT_EQ(t[0].fieldList.size(), 2u);
  EXPECT_EQ(t[0].fieldList[0], std::make_pair(std::string("user"), std::string("alice")));
  EXPECT_EQ(t[0].fieldList[1], std::make_pair(std::string("ms"), std::string("12")));
  EXPECT_EQ(t[0].file, "AsyncForward_test.cc");
  EXPECT_EQ(t[0].line, line);
  EXPECT_EQ(t[0].tid, muon::CurrentThread::tid());
  EXPECT_EQ(t[1].level, Logger::WARN);
  EXPECT_EQ(t[1].message, "disk full");
  EXPECT_TRUE(t[1].fieldList.empty());
  // The record's text is the line the file got.
  log.stop();
  const std::vector<std::string> lines = muon::test::logLinesIn(dir_);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(t[0].text, lines[0] + "\n");
  EXPECT_EQ(t[1].text, lines[1] + "\n");
}

TEST_F(AsyncForwardTest, JsonFilesForwardTheSameRecords) {
  AsyncLogging::Options options;
  options.files.format = muon::LineFormat::kJson;
  AsyncLogging log(basename(), 1 << 30, options);
  auto forwarded = log.forward(sink_);
  auto attached = Logger::attach(log);
  log.start();
  LOG_ERROR << "refused" << muon::kv("port", 443);
  log.flush();
  const std::vector<Got> t = sink_.records();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].level, Logger::ERROR);
  EXPECT_EQ(t[0].message, "refused port=443");
  ASSERT_EQ(t[0].fieldList.size(), 1u);
  EXPECT_EQ(t[0].fieldList[0].second, "443");
}

TEST_F(AsyncForwardTest, LinesThatCameAsTextAreReadBackIntoTheirParts) {
  AsyncLogging log(basename(), 1 << 30);
  auto forwarded = log.forward(sink_);
  log.start();
  // Not from an attached statement: through the buffers, as text.
  const std::string muonLine = "20261121 08:15:02.123456Z  4321 WARN  disk full - df.cc:42\n";
  log.append(muonLine.data(), muonLine.size());
  log.append("a foreign line\n", 15);
  log.flush();
  const std::vector<Got> t = sink_.records();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].level, Logger::WARN);
  EXPECT_EQ(t[0].tid, 4321);
  EXPECT_EQ(t[0].message, "disk full");
  EXPECT_EQ(t[0].file, "df.cc");
  EXPECT_EQ(t[0].line, 42);
  EXPECT_EQ(t[0].text, muonLine);
  EXPECT_EQ(t[1].message, "a foreign line");
  EXPECT_EQ(t[1].file, "");
  EXPECT_EQ(t[1].text, "a foreign line\n");
}

TEST_F(AsyncForwardTest, CrashSafeLinesAreForwardedFromTheSpool) {
  AsyncLogging::Options options;
  options.crashSafe = true;
  options.policy = AsyncLogging::kBlock;
  AsyncLogging log(basename(), 1 << 30, options);
  ASSERT_TRUE(log.stats().crashSafe);
  auto forwarded = log.forward(sink_);
  auto attached = Logger::attach(log);
  log.start();
  for (int i = 0; i < 100; ++i) LOG_INFO << "line " << i << muon::kv("i", i);
  log.flush();
  const std::vector<Got> t = sink_.records();
  ASSERT_EQ(t.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(t[i].message, "line " + std::to_string(i) + " i=" + std::to_string(i));
    EXPECT_EQ(t[i].file, "AsyncForward_test.cc");
  }
}

TEST_F(AsyncForwardTest, TheMinimumLevelFiltersAndTheEndStopsTheLines) {
  RecordCapture warnings;
  AsyncLogging log(basename(), 1 << 30);
  auto all = log.forward(sink_);
  auto forwarded = log.forward(warnings, Logger::WARN);
  auto attached = Logger::attach(log);
  log.start();
  LOG_INFO << "one";
  LOG_WARN << "two";
  log.flush();
  all.reset();
  LOG_ERROR << "three";
  log.flush();
  const std::vector<Got> t = sink_.records();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].message, "two");
  const std::vector<Got> w = warnings.records();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].message, "two");
  EXPECT_EQ(w[1].message, "three");
  // flush() flushed the sinks forwarded to at the time.
  EXPECT_EQ(sink_.flushes(), 1);
  EXPECT_EQ(warnings.flushes(), 2);
}

TEST_F(AsyncForwardTest, AForwardMayOutliveItsAsyncLogging) {
  AsyncLogging::Forward forwarded;
  {
    AsyncLogging log(basename(), 1 << 30);
    forwarded = log.forward(sink_);
    log.append("last\n", 5);
  }
  forwarded.reset();
  const std::vector<Got> t = sink_.records();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].message, "last");
}

}  // namespace
