// Small scanners for tests that read millions of log lines back (too many
// for std::regex). Each reads at s[*pos] and advances *pos past what it took.
#pragma once

#include <cstring>
#include <string>

namespace muon {
namespace test {

// A decimal number of at least one digit.
inline bool scanNumber(const std::string& s, size_t* pos, long* out) {
  size_t start = *pos;
  long v = 0;
  while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9') v = v * 10 + (s[(*pos)++] - '0');
  *out = v;
  return *pos > start;
}

// Exactly `text`.
inline bool scanLiteral(const std::string& s, size_t* pos, const char* text) {
  size_t n = std::strlen(text);
  if (s.compare(*pos, n, text) != 0) return false;
  *pos += n;
  return true;
}

}  // namespace test
}  // namespace muon
