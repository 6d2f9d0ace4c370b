// Shared by log_level_child (LogLevelChild.cc) and LoggerEnv_test.cc: the
// child exits with kChildExitBase + the level Logger started with.
#pragma once

constexpr int kChildExitBase = 40;
