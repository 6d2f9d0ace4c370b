// A checker of Prometheus's text exposition format 0.0.4, line by line, for
// the inspector's tests: every sample belongs to a family whose "# HELP"
// and "# TYPE" lines came before it (and no family is announced twice),
// metric and label names are valid, label values are quoted, values are
// numbers, a counter's name ends in _total. check() returns the problems
// (empty: none) and fills `samples`, series -> value.
#pragma once

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "PosixRegex.h"

namespace muon {
namespace net {
namespace test {

struct Exposition {
  std::map<std::string, double> samples;        // "name{labels}" -> value
  std::map<std::string, std::string> types;     // family -> "counter" | "gauge"

  std::vector<std::string> check(const std::string& text) {
    // POSIX extended expressions (std::regex trips GCC 12's warnings under ASan).
    static const muon::test::PosixRegex help("# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+");
    static const muon::test::PosixRegex type("# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|untyped|summary|histogram)");
    static const muon::test::PosixRegex sample(
        "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\[\\\\\"n])*\""
        "(,[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\[\\\\\"n])*\")*\\})? [^ ]+");
    std::vector<std::string> errors;
    std::set<std::string> helped;
    std::string current;  // the family whose TYPE came last
    std::istringstream in(text);
    std::string line;
    int n = 0;
    if (!text.empty() && text.back() != '\n') errors.push_back("the last line has no line feed");
    while (std::getline(in, line)) {
      ++n;
      const std::string at = "line " + std::to_string(n) + " '" + line + "': ";
      std::vector<std::string> m;
      if (line.rfind("# HELP ", 0) == 0) {
        if (!help.fullMatch(line, &m)) {
          errors.push_back(at + "bad HELP line");
        } else if (!helped.insert(m[1]).second) {
          errors.push_back(at + "a second HELP for the family");
        }
      } else if (line.rfind("# TYPE ", 0) == 0) {
        if (!type.fullMatch(line, &m)) {
          errors.push_back(at + "bad TYPE line");
          continue;
        }
        const std::string name = m[1];
        if (types.count(name) != 0) errors.push_back(at + "a second TYPE for the family");
        if (helped.count(name) == 0) errors.push_back(at + "TYPE before HELP");
        types[name] = m[2];
        current = name;
        const bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
        if ((m[2] == "counter") != total) errors.push_back(at + "counters, and only they, end in _total");
      } else if (line.empty() || line[0] == '#') {
        errors.push_back(at + "a blank line or comment");
      } else if (!sample.fullMatch(line, &m)) {
        errors.push_back(at + "not a valid sample");
      } else {
        const std::string name = m[1];
        if (name != current) errors.push_back(at + "a sample outside its family's HELP/TYPE block");
        const std::string value = line.substr(line.rfind(' ') + 1);
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (*end != '\0' || value.empty()) errors.push_back(at + "bad value");
        const std::string series = name + m[2];
        if (samples.count(series) != 0) errors.push_back(at + "a series given twice");
        samples[series] = v;
      }
    }
    return errors;
  }
};

}  // namespace test
}  // namespace net
}  // namespace muon
