#include "SpdlogJournal.h"

#include <memory>

#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>

void runSpdlog(long lines, const std::string& identifier) {
  auto logger = std::make_shared<spdlog::logger>(
      "journal_bench", std::make_shared<spdlog::sinks::systemd_sink_st>(identifier));
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < lines; ++i) {
    SPDLOG_LOGGER_INFO(logger, "Hello 0123456789 abcdefghijklmnopqrstuvwxyz {} user=alice count={}", i, i);
  }
  const double calls = secondsSince(start);
  report("spdlog", lines, calls, calls, 0);
}
