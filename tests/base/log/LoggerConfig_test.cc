// LoggerConfig: the settings as one object replaced whole, read by logging
// threads while other threads change it (run under ThreadSanitizer too).
#include "muon/base/internal/LoggerConfig.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "muon/base/LogRecord.h"
#include "muon/base/Logging.h"

namespace muon {
namespace {

// Counts the WARN lines it gets, as text or as records.
class WarnCounter {
 public:
  void count(std::string_view text) {
    if (text.find(" WARN  ") != std::string_view::npos) warns_.fetch_add(1);
  }
  int warns() const { return warns_.load(); }

 private:
  std::atomic<int> warns_{0};
};
struct TextSink {
  void append(const char* line, size_t len) { counter.count(std::string_view(line, len)); }
  void flush() {}
  WarnCounter counter;
};
struct RecordSink {
  void append(const LogRecord& record) {
    if (record.level == Logger::WARN) counter.count(record.text);
  }
  void flush() {}
  WarnCounter counter;
};

class LoggerConfigTest : public ::testing::Test {
 protected:
  void TearDown() override {
    Logger::setLogLevel(Logger::INFO);
    Logger::clearModuleLevels();
    Logger::setFlushLevel(Logger::FATAL);
    Logger::enableBacktrace(0);
  }
};

// What keeps the memory bounded: a change back to a configuration used
// before publishes that one again instead of a copy.
TEST_F(LoggerConfigTest, AConfigurationUsedBeforeIsPublishedAgain) {
  Logger::setLogLevel(Logger::DEBUG);
  const detail::LoggerConfig* debug = &detail::loggerConfig();
  Logger::setLogLevel(Logger::INFO);
  const detail::LoggerConfig* info = &detail::loggerConfig();
  EXPECT_NE(debug, info);
  Logger::setLogLevel(Logger::DEBUG);
  EXPECT_EQ(&detail::loggerConfig(), debug);
  Logger::setLogLevel(Logger::INFO);
  EXPECT_EQ(&detail::loggerConfig(), info);

  Logger::setModuleLevel("Some*", Logger::TRACE);
  const detail::LoggerConfig* modules = &detail::loggerConfig();
  Logger::clearModuleLevels();
  EXPECT_EQ(&detail::loggerConfig(), info);
  Logger::setLogLevels("info,Some*=trace");
  EXPECT_EQ(&detail::loggerConfig(), modules);
}

TEST_F(LoggerConfigTest, EachSetterChangesOnlyItsOwnSetting) {
  RecordSink sink;
  auto attached = Logger::attach(sink);
  Logger::setModuleLevel("LoggerConfig_test", Logger::DEBUG);
  Logger::setFlushLevel(Logger::WARN);
  Logger::enableBacktrace(3);
  const detail::LoggerConfig& c = detail::loggerConfig();
  EXPECT_EQ(c.defaultLevel, Logger::INFO);
  ASSERT_NE(c.modules, nullptr);
  EXPECT_EQ(c.modules->size(), 1u);
  EXPECT_EQ(c.flushLevel, Logger::WARN);
  EXPECT_EQ(c.backtraceLines, 3u);
  EXPECT_EQ(c.attentionLevel, Logger::TRACE);
  EXPECT_EQ(c.sink.sink, &sink);
  EXPECT_EQ(c.output, nullptr);
  Logger::enableBacktrace(0);
  // Records are made off the common path: every line takes it.
  EXPECT_EQ(detail::loggerConfig().attentionLevel, Logger::TRACE);
  LOG_WARN << "to the sink";
  EXPECT_EQ(sink.counter.warns(), 1);
  attached.detach();
  EXPECT_EQ(detail::loggerConfig().attentionLevel, Logger::WARN);
  EXPECT_EQ(detail::loggerConfig().output, &detail::defaultOutput);
  EXPECT_EQ(detail::loggerConfig().modules, c.modules);
}

// Logging threads while another thread changes every setting and swaps the
// sink: each statement reads one whole configuration (ThreadSanitizer
// checks the publication), and no WARN line is lost or doubled.
TEST_F(LoggerConfigTest, ChangesRaceWithLoggingThreads) {
  constexpr int kThreads = 3;
  constexpr int kLines = 2000;
  TextSink text;
  RecordSink records;
  LogAttachment attached = Logger::attach(text);
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&running, t] {
      for (int i = 0; i < kLines; ++i) {
        LOG_DEBUG << "debug " << t << ' ' << i;
        LOG_INFO << "info " << t << ' ' << i;
        LOG_WARN << "warn " << t << ' ' << i;
      }
      running.fetch_sub(1);
    });
  }
  for (int round = 0; running.load() > 0; ++round) {
    Logger::setLogLevel(round % 2 ? Logger::DEBUG : Logger::INFO);
    Logger::setModuleLevel("LoggerConfig_test", round % 3 ? Logger::TRACE : Logger::WARN);
    Logger::setFlushLevel(round % 4 ? Logger::FATAL : Logger::WARN);
    Logger::enableBacktrace(round % 5 ? 0 : 8);
    if (round % 2) {
      attached = Logger::attach(records);
    } else {
      attached = Logger::attach(text);
    }
  }
  for (std::thread& t : threads) t.join();
  attached.detach();
  EXPECT_EQ(text.counter.warns() + records.counter.warns(), kThreads * kLines);
}

}  // namespace
}  // namespace muon
