// journal_bench's peer and its report, apart from muon's statements:
// spdlog's systemd sink includes <syslog.h>, whose LOG_INFO and LOG_DEBUG
// are macros that muon's would clash with.
#pragma once

#include <chrono>
#include <string>

// Seconds since `start`.
inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Prints the result line journal_bench.cc describes.
void report(const char* logger, long lines, double calls, double delivered, unsigned long long lost);

// The statement `lines` times through spdlog's systemd_sink, then report().
void runSpdlog(long lines, const std::string& identifier);
