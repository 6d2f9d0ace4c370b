#include "muon/net/relp/OutageReport.h"

#include <cassert>
#include <cstdio>

namespace muon {
namespace net {
namespace relp {

namespace {

std::string seconds(int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms) / 1000.0);
  return text;
}

std::string failures(uint64_t n) { return std::to_string(n) + (n == 1 ? " failure" : " failures"); }

}  // namespace

OutageReport::OutageReport(int intervalMs) : intervalMs_(intervalMs) { assert(intervalMs > 0); }

std::string OutageReport::failed(int64_t nowMs, const std::string& what) {
  if (failures_++ == 0) {
    downSinceMs_ = nowMs;
    lastLineMs_ = nowMs;
    return what;
  }
  if (nowMs - lastLineMs_ < intervalMs_) return std::string();
  lastLineMs_ = nowMs;
  return what + " (" + failures(failures_) + " in " + seconds(nowMs - downSinceMs_) +
         ", still trying)";
}

std::string OutageReport::recovered(int64_t nowMs, const std::string& how) {
  if (failures_ == 0) return std::string();
  const std::string line =
      how + " after " + seconds(nowMs - downSinceMs_) + " down, " + failures(failures_);
  failures_ = 0;
  return line;
}

}  // namespace relp
}  // namespace net
}  // namespace muon
