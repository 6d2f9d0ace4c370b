// log_level_child: exits with kChildExitBase + Logger::logLevel(), the level
// the Logger took from MUON_LOG_LEVEL at start-up. Run by LoggerEnv_test.cc,
// which sets the variable and reads the exit code and stderr.
#include <cstdio>

#include "LogLevelChild.h"
#include "muon/base/Logging.h"

int main() {
  std::fflush(stdout);
  return kChildExitBase + muon::Logger::logLevel();
}
