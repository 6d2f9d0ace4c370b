// LogfmtParser: a logfmt parser of the tests' own, written from the
// format's description rather than from muon's encoder, that the logfmt
// lines' tests and fuzz target read muon's lines back with.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace muon {
namespace test {

using Pairs = std::vector<std::pair<std::string, std::string>>;

inline int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `line` (no '\n') as key=value pairs separated by one space: a key is
// bytes other than ' ', '=' and '"'; a value is bare (no space, no '"') or
// quoted with \" \\ \n \r \t \uXXXX escapes. False for anything else.
inline bool parseLogfmt(const std::string& line, Pairs* out) {
  out->clear();
  size_t i = 0;
  while (i < line.size()) {
    if (!out->empty()) {
      if (line[i] != ' ') return false;
      ++i;
    }
    const size_t key = i;
    while (i < line.size() && line[i] != '=' && line[i] != ' ' && line[i] != '"') ++i;
    if (i == key || i == line.size() || line[i] != '=') return false;
    std::string name = line.substr(key, i - key);
    ++i;
    std::string value;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        const char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          value += c;
          continue;
        }
        if (i == line.size()) return false;
        const char e = line[i++];
        switch (e) {
          case '"': value += '"'; break;
          case '\\': value += '\\'; break;
          case 'n': value += '\n'; break;
          case 'r': value += '\r'; break;
          case 't': value += '\t'; break;
          case 'u': {
            if (i + 4 > line.size()) return false;
            int cp = 0;
            for (size_t k = 0; k < 4; ++k) {
              const int d = hexDigit(line[i + k]);
              if (d < 0) return false;
              cp = cp * 16 + d;
            }
            if (cp >= 0x80) return false;  // muon escapes only control characters
            value += static_cast<char>(cp);
            i += 4;
            break;
          }
          default:
            return false;
        }
      }
      if (!closed) return false;
    } else {
      const size_t v = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '"') ++i;
      if (i < line.size() && line[i] == '"') return false;
      value = line.substr(v, i - v);
    }
    out->emplace_back(std::move(name), std::move(value));
  }
  return !out->empty();
}

}  // namespace test
}  // namespace muon
