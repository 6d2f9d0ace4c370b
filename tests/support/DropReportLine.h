// The one form of a "Dropped log messages" report (LineLayout.h,
// dropReport), as the backend and a recovery write it, for the tests that
// add up its counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "PosixRegex.h"

namespace muon {
namespace test {

// Whether `line` (without its '\n') is a drop report; *messages gets its M.
inline bool isDropReport(const std::string& line, uint64_t* messages) {
  static const PosixRegex report(
      "Dropped log messages at [0-9]{8} [0-9:.]{15}, ([0-9]+) larger buffers \\(([0-9]+) "
      "messages\\)(; .+)?");
  std::vector<std::string> groups;
  if (!report.fullMatch(line, &groups)) return false;
  *messages = std::stoull(groups[2]);
  return true;
}

}  // namespace test
}  // namespace muon
