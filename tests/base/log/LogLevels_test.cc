// Per-module levels: Logger::setModuleLevel, setLogLevels (MUON_LOG_LEVEL's
// syntax), and the LogSite cache behind them (base/log/LogLevels.cc).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "LineCapture.h"
#include "muon/base/Logging.h"

using muon::Logger;
using muon::test::LineCapture;

void logDebugInAnotherFile();  // LogLevels_other.cc

namespace {

int g_evaluated = 0;
int evaluated() { return ++g_evaluated; }

// One statement of each level, always the same sites.
void logEachLevel() {
  LOG_TRACE << "trace";
  LOG_DEBUG << "debug";
  LOG_INFO << "info";
  LOG_WARN << "warn";
  LOG_ERROR << "error";
}

class LogLevelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Logger::clearModuleLevels();
    Logger::setLogLevel(Logger::INFO);
    g_evaluated = 0;
  }
  void TearDown() override {
    Logger::clearModuleLevels();
    Logger::setLogLevel(Logger::INFO);
  }
  // Which of logEachLevel()'s lines come out now.
  std::string levelsWritten() {
    size_t before = capture_.lines().size();
    logEachLevel();
    std::vector<std::string> got = capture_.lines();
    std::string levels;
    for (size_t i = before; i < got.size(); ++i) {
      for (const char* name : {"TRACE", "DEBUG", "INFO", "WARN", "ERROR"}) {
        if (got[i].find(std::string(name) + ' ') != std::string::npos) {
          levels += levels.empty() ? "" : ",";
          levels += name;
        }
      }
    }
    return levels;
  }

  LineCapture capture_;
  muon::LogAttachment attached_ = Logger::attach(capture_);
};

TEST_F(LogLevelsTest, ABasenamePatternSetsThisFilesLevelOnly) {
  EXPECT_EQ(levelsWritten(), "INFO,WARN,ERROR");  // resolved once, at the default
  Logger::setModuleLevel("LogLevels_test", Logger::DEBUG);  // re-resolves those sites
  EXPECT_EQ(levelsWritten(), "DEBUG,INFO,WARN,ERROR");
  logDebugInAnotherFile();
  EXPECT_EQ(capture_.count("from the other file"), 0u);
  Logger::setModuleLevel("LogLevels_other.cc", Logger::TRACE);  // with the extension too
  logDebugInAnotherFile();
  EXPECT_EQ(capture_.count("from the other file"), 1u);
}

TEST_F(LogLevelsTest, AModuleLevelAboveTheDefaultSilencesAndEvaluatesNothing) {
  Logger::setModuleLevel("LogLevels_*", Logger::ERROR);
  EXPECT_EQ(levelsWritten(), "ERROR");
  LOG_WARN << evaluated();
  EXPECT_EQ(g_evaluated, 0);
}

// The site of a statement that never runs: MUON_LOG_SITE, as LOG_* has it.
muon::detail::LogSite& siteNeverRun() { return MUON_LOG_SITE; }

TEST_F(LogLevelsTest, EverySiteIsRegisteredAtLoadSoALevelReachesAStatementBeforeItFirstRuns) {
  muon::detail::LogSite& site = siteNeverRun();
  EXPECT_TRUE(site.registered);
  EXPECT_EQ(site.threshold.load(), Logger::INFO);
  Logger::setModuleLevel("LogLevels_test", Logger::ERROR);  // re-resolves registered sites only
  EXPECT_EQ(site.threshold.load(), Logger::ERROR);
  Logger::setLogLevel(Logger::DEBUG);  // the module's level still wins
  EXPECT_EQ(site.threshold.load(), Logger::ERROR);
  Logger::clearModuleLevels();
  EXPECT_EQ(site.threshold.load(), Logger::DEBUG);
}

// A shared object's sites, as its unload ends their registrations: a level
// change after that leaves them alone (their memory would be gone).
TEST_F(LogLevelsTest, ASiteWhoseRegistrationHasEndedIsNoLongerResolved) {
  static muon::detail::LogSite site{"plugins/Unloaded.cc", 7};
  {
    const muon::detail::SiteRegistration registration(site);
    EXPECT_TRUE(site.registered);
    Logger::setModuleLevel("Unloaded", Logger::ERROR);
    EXPECT_EQ(site.threshold.load(), Logger::ERROR);
  }
  EXPECT_FALSE(site.registered);
  Logger::setModuleLevel("Unloaded", Logger::DEBUG);
  EXPECT_EQ(site.threshold.load(), Logger::ERROR);
  // The sites registered before and after it are still in the list.
  muon::detail::LogSite& other = siteNeverRun();
  EXPECT_EQ(other.threshold.load(), Logger::INFO);
  Logger::setModuleLevel("LogLevels_test", Logger::WARN);
  EXPECT_EQ(other.threshold.load(), Logger::WARN);
}

TEST_F(LogLevelsTest, APatternThatMatchesNothingChangesNothing) {
  Logger::setModuleLevel("NoSuchFile", Logger::TRACE);
  Logger::setModuleLevel("nowhere/*", Logger::TRACE);
  EXPECT_EQ(levelsWritten(), "INFO,WARN,ERROR");
}

TEST_F(LogLevelsTest, PathGlobsMatchTrailingComponentsAndStarStopsAtASlash) {
  // This file is tests/base/log/LogLevels_test.cc.
  Logger::setModuleLevel("tests/*/*", Logger::TRACE);  // one '/' short
  EXPECT_EQ(levelsWritten(), "INFO,WARN,ERROR");
  Logger::setModuleLevel("tests/*/*/*", Logger::TRACE);
  EXPECT_EQ(levelsWritten(), "TRACE,DEBUG,INFO,WARN,ERROR");
  Logger::clearModuleLevels();
  Logger::setModuleLevel("log/LogLevels_t?st.cc", Logger::DEBUG);
  EXPECT_EQ(levelsWritten(), "DEBUG,INFO,WARN,ERROR");
  Logger::clearModuleLevels();
  EXPECT_EQ(levelsWritten(), "INFO,WARN,ERROR");
}

TEST_F(LogLevelsTest, ThePatternSetLastWinsAndSettingOneAgainMakesItLast) {
  Logger::setModuleLevel("LogLevels_test", Logger::DEBUG);
  Logger::setModuleLevel("log/*", Logger::ERROR);
  EXPECT_EQ(levelsWritten(), "ERROR");
  Logger::setModuleLevel("LogLevels_test", Logger::TRACE);
  EXPECT_EQ(levelsWritten(), "TRACE,DEBUG,INFO,WARN,ERROR");
}

TEST_F(LogLevelsTest, TheDefaultLevelStillAppliesBesideModules) {
  Logger::setModuleLevel("LogLevels_other", Logger::TRACE);
  Logger::setLogLevel(Logger::WARN);
  EXPECT_EQ(Logger::logLevel(), Logger::WARN);
  EXPECT_EQ(levelsWritten(), "WARN,ERROR");
  logDebugInAnotherFile();
  EXPECT_EQ(capture_.count("from the other file"), 1u);
}

TEST_F(LogLevelsTest, SetLogLevelsTakesMuonLogLevelsSyntax) {
  std::string error;
  ASSERT_TRUE(Logger::setLogLevels("warn, LogLevels_test = debug ,other=error", &error)) << error;
  EXPECT_EQ(Logger::logLevel(), Logger::WARN);
  EXPECT_EQ(levelsWritten(), "DEBUG,INFO,WARN,ERROR");
  ASSERT_TRUE(Logger::setLogLevels("error"));  // replaces the modules too
  EXPECT_EQ(levelsWritten(), "ERROR");
  ASSERT_TRUE(Logger::setLogLevels("LogLevels_test=trace"));  // no bare level: info
  EXPECT_EQ(Logger::logLevel(), Logger::INFO);
  EXPECT_EQ(levelsWritten(), "TRACE,DEBUG,INFO,WARN,ERROR");
}

TEST_F(LogLevelsTest, AMalformedSpecIsRefusedWithAReasonAndChangesNothing) {
  Logger::setModuleLevel("LogLevels_test", Logger::DEBUG);
  const char* bad[] = {"", "loud", "info,=debug", "info,LogLevels_test=loud", "info,warn",
                       "info,,debug", "LogLevels_test=", "=", ","};
  for (const char* spec : bad) {
    std::string error;
    EXPECT_FALSE(Logger::setLogLevels(spec, &error)) << spec;
    EXPECT_NE(error.find("expected LEVEL or PATTERN=LEVEL"), std::string::npos) << spec << ": " << error;
    EXPECT_EQ(Logger::logLevel(), Logger::INFO) << spec;
    EXPECT_EQ(levelsWritten(), "DEBUG,INFO,WARN,ERROR") << spec;
  }
  std::string error;
  Logger::setLogLevels("info,x=loud", &error);
  EXPECT_NE(error.find("'loud' is not a level"), std::string::npos) << error;
}

TEST_F(LogLevelsTest, RateLimitedAndConditionalStatementsFollowModuleLevels) {
  Logger::setModuleLevel("LogLevels_test", Logger::WARN);
  LOG_IF(INFO, evaluated() > 0) << "no";
  LOG_EVERY_N(INFO, 1) << "no";
  EXPECT_EQ(g_evaluated, 0);
  Logger::setModuleLevel("LogLevels_test", Logger::DEBUG);
  LOG_IF(DEBUG, evaluated() > 0) << "yes";
  LOG_FIRST_N(DEBUG, 1) << "yes";
  EXPECT_EQ(g_evaluated, 1);
  EXPECT_EQ(capture_.count("yes"), 2u);
}

// Levels change while threads log through the same sites: no line is cut or
// lost at a level that is on throughout (TSan checks the sites' accesses).
TEST_F(LogLevelsTest, LevelsChangeWhileThreadsLog) {
  constexpr int kThreads = 2;
  constexpr int kLines = 5000;
  std::atomic<bool> done{false};
  std::thread changer([&] {
    for (int i = 0; !done.load(); ++i) {
      Logger::setModuleLevel("LogLevels_test", i % 2 ? Logger::TRACE : Logger::WARN);
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kLines; ++i) {
        LOG_DEBUG << "sometimes";
        LOG_ERROR << "always";
      }
    });
  }
  for (std::thread& th : threads) th.join();
  done = true;
  changer.join();
  EXPECT_EQ(capture_.count("always"), size_t{kThreads} * kLines);
}

}  // namespace
