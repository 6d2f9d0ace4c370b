// Log lines that say where they belong: a tag and a number, the same length
// for every number, so a test can check a file holds each whole and in order.
// For tests only.
#pragma once

#include <cstdio>
#include <string>

namespace muon {
namespace test {

// "<tag> <i, 7 digits> padding ...\n"
inline std::string numberedLine(const std::string& tag, int i) {
  char buf[96];
  int n =
      std::snprintf(buf, sizeof buf, "%s %07d padding padding padding padding\n", tag.c_str(), i);
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace test
}  // namespace muon
