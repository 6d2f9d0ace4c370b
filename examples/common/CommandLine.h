// Command-line helpers shared by the example programs: muon's and their
// Boost.Asio twins alike, so nothing here uses muon; only C++ and POSIX.
// Each program reports a bad argument with its own usage text and exit
// status 2, and answers --help with that text on stdout and status 0.
#pragma once

#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace muon {
namespace examples {

// Whether the command line asks for help (-h or --help anywhere): the
// program then prints its usage on stdout and exits 0, as asked; a bad
// command line gets the usage on stderr and status 2.
inline bool helpRequested(int argc, char* const argv[]) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return true;
  }
  return false;
}

// True if all of s is a base-10 integer in [lo, hi]. "12x", "", " 1" and
// out-of-range values are refused rather than read as something else.
inline bool parseInt(const char* s, long lo, long hi, long* out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// The same for a decimal number (fractions allowed; NaN is out of range).
inline bool parseNumber(const char* s, double lo, double hi, double* out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {""}: a list flag's items, each
// for the caller to check.
inline std::vector<std::string> splitCommas(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = s.find(',', start);
    parts.push_back(s.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// "1.2.3.4", "80" -> "1.2.3.4:80"; "::1", "80" -> "[::1]:80".
inline std::string joinHostPort(const std::string& ip, const std::string& port) {
  return (ip.find(':') == std::string::npos ? ip : "[" + ip + "]") + ":" + port;
}

// One descriptor per connection: raise the soft RLIMIT_NOFILE to the hard
// limit. Returns the soft limit now in force (0 if it cannot be read).
inline rlim_t raiseFdLimit() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur;
}

}  // namespace examples
}  // namespace muon
