// Logger's level names, and MUON_LOG_LEVEL, which is read once at start-up:
// each case runs the helper program log_level_child (LogLevelChild.cc) with
// the variable set, and reads the level from its exit code.
#include "muon/base/Logging.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ChildProcess.h"
#include "LogLevelChild.h"
#include "TempDir.h"

using muon::Logger;
using muon::test::ChildResult;
using muon::test::TempDir;

namespace {

// A level's name as a user writes it, and the level it means: the six
// names, and a few in other cases.
struct NamedLevel {
  const char* name;
  Logger::LogLevel level;
};
const NamedLevel kNamedLevels[] = {{"trace", Logger::TRACE}, {"debug", Logger::DEBUG},
                                   {"info", Logger::INFO},   {"warn", Logger::WARN},
                                   {"error", Logger::ERROR}, {"fatal", Logger::FATAL},
                                   {"WARN", Logger::WARN},   {"Debug", Logger::DEBUG},
                                   {"TRACE", Logger::TRACE}};

TEST(LoggerLevelTest, ParseLogLevelNames) {
  for (const NamedLevel& c : kNamedLevels) {
    Logger::LogLevel got = Logger::NUM_LOG_LEVELS;
    EXPECT_TRUE(Logger::parseLogLevel(c.name, &got)) << c.name;
    EXPECT_EQ(got, c.level) << c.name;
  }
  for (const char* bad : {"", "verbose", "warning", "info ", "inf", "4"}) {
    Logger::LogLevel got = Logger::DEBUG;
    EXPECT_FALSE(Logger::parseLogLevel(bad, &got)) << bad;
    EXPECT_EQ(got, Logger::DEBUG) << "unchanged on failure: " << bad;
  }
}

// Runs log_level_child with MUON_LOG_LEVEL set to `value` (unset if nullptr)
// and the rest of this process's environment but gtest's own variables
// (sharding, XML output), which are not for the child.
ChildResult runWithLogLevel(const char* value) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string var = *e;
    if (var.rfind("MUON_LOG_LEVEL=", 0) == 0 || var.rfind("GTEST_", 0) == 0) continue;
    env.push_back(var);
  }
  if (value != nullptr) env.push_back(std::string("MUON_LOG_LEVEL=") + value);
  TempDir dir;
  return muon::test::runProgram(dir, {MUON_LOG_LEVEL_CHILD_PATH}, env);
}

TEST(LoggerEnvTest, MuonLogLevelSetsTheStartingLevel) {
  for (const NamedLevel& c : kNamedLevels) {
    ChildResult r = runWithLogLevel(c.name);
    EXPECT_EQ(r.exitCode(), kChildExitBase + c.level) << c.name << "; stderr: " << r.stderrText;
    EXPECT_EQ(r.stderrText.find("MUON_LOG_LEVEL"), std::string::npos) << r.stderrText;
  }
}

TEST(LoggerEnvTest, UnsetOrEmptyMeansInfoWithoutAWarning) {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    ChildResult r = runWithLogLevel(value);
    EXPECT_EQ(r.exitCode(), kChildExitBase + Logger::INFO) << r.stderrText;
    EXPECT_EQ(r.stderrText.find("MUON_LOG_LEVEL"), std::string::npos) << r.stderrText;
  }
}

TEST(LoggerEnvTest, BadValueWarnsOnStderrAndUsesInfo) {
  ChildResult r = runWithLogLevel("loud");
  EXPECT_EQ(r.exitCode(), kChildExitBase + Logger::INFO) << r.stderrText;
  EXPECT_NE(r.stderrText.find("MUON_LOG_LEVEL=loud"), std::string::npos) << r.stderrText;
  EXPECT_NE(r.stderrText.find("using info"), std::string::npos) << r.stderrText;
}

TEST(LoggerEnvTest, ModuleLevelsInMuonLogLevelAreAcceptedBesideTheDefault) {
  ChildResult r = runWithLogLevel("debug,TcpConnection=trace,net/*=warn");
  EXPECT_EQ(r.exitCode(), kChildExitBase + Logger::DEBUG) << r.stderrText;
  EXPECT_EQ(r.stderrText.find("MUON_LOG_LEVEL"), std::string::npos) << r.stderrText;
  r = runWithLogLevel("net/*=trace");
  EXPECT_EQ(r.exitCode(), kChildExitBase + Logger::INFO) << r.stderrText;
  EXPECT_EQ(r.stderrText.find("MUON_LOG_LEVEL"), std::string::npos) << r.stderrText;
}

TEST(LoggerEnvTest, AMalformedModuleListWarnsOnceNamesTheProblemAndUsesInfo) {
  for (const char* value : {"debug,TcpConnection=loud", "warn,=trace", "debug,,", "error,warn"}) {
    ChildResult r = runWithLogLevel(value);
    EXPECT_EQ(r.exitCode(), kChildExitBase + Logger::INFO) << value << ": " << r.stderrText;
    const std::string expected = std::string("muon: ignoring MUON_LOG_LEVEL=") + value + ": ";
    EXPECT_NE(r.stderrText.find(expected), std::string::npos) << r.stderrText;
    EXPECT_EQ(r.stderrText.find("muon: ignoring", r.stderrText.find(expected) + 1),
              std::string::npos)
        << "reported twice: " << r.stderrText;
    EXPECT_NE(r.stderrText.find("using info"), std::string::npos) << r.stderrText;
  }
}

}  // namespace
