// A POSIX extended regular expression (<regex.h>) for tests, with
// std::regex_match's meaning: the whole string must match. std::regex is not
// used because, in GCC 12's sanitizer builds, it sets off
// -Wmaybe-uninitialized inside libstdc++.
#pragma once

#include <regex.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace muon {
namespace test {

class PosixRegex {
 public:
  explicit PosixRegex(const std::string& pattern) {
    if (::regcomp(&re_, pattern.c_str(), REG_EXTENDED) != 0) {
      throw std::invalid_argument("bad regular expression: " + pattern);
    }
  }
  ~PosixRegex() { ::regfree(&re_); }
  PosixRegex(const PosixRegex&) = delete;
  PosixRegex& operator=(const PosixRegex&) = delete;

  // True if all of `s` matches; `groups` then gets group 0 (the whole) and
  // each parenthesised group ("" for one that took no part).
  bool fullMatch(const std::string& s, std::vector<std::string>* groups = nullptr) const {
    std::vector<regmatch_t> m(re_.re_nsub + 1);
    if (::regexec(&re_, s.c_str(), m.size(), m.data(), 0) != 0) return false;
    if (m[0].rm_so != 0 || static_cast<size_t>(m[0].rm_eo) != s.size()) return false;
    if (groups) {
      groups->clear();
      for (const regmatch_t& g : m) {
        groups->push_back(g.rm_so < 0 ? std::string()
                                      : s.substr(static_cast<size_t>(g.rm_so),
                                                 static_cast<size_t>(g.rm_eo - g.rm_so)));
      }
    }
    return true;
  }

 private:
  regex_t re_;
};

}  // namespace test
}  // namespace muon
