#include "muon/net/relp/RelpResponse.h"

namespace muon {
namespace net {
namespace relp {

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Removes a trailing CR or LF left by a sender's line ending.
std::string_view trimLineEnd(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}
}  // namespace

bool parseResponse(std::string_view data, RelpResponse* out) {
  if (data.size() < 3 || !isDigit(data[0]) || !isDigit(data[1]) || !isDigit(data[2]) ||
      data[0] == '0') {
    return false;
  }
  if (data.size() > 3 && data[3] != ' ' && data[3] != '\n') return false;
  RelpResponse r;
  r.code = (data[0] - '0') * 100 + (data[1] - '0') * 10 + (data[2] - '0');
  std::string_view rest = data.substr(3);
  if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  size_t lf = rest.find('\n');
  if (lf == std::string_view::npos) {
    r.text = rest;
  } else {
    r.text = rest.substr(0, lf);
    r.commandData = rest.substr(lf + 1);
  }
  *out = r;
  return true;
}

bool hasOffer(std::string_view offers, std::string_view name, std::string_view value) {
  while (!offers.empty()) {
    size_t lf = offers.find('\n');
    std::string_view line = trimLineEnd(offers.substr(0, lf));
    offers = lf == std::string_view::npos ? std::string_view() : offers.substr(lf + 1);
    size_t eq = line.find('=');
    if (line.substr(0, eq) != name) continue;
    if (value.empty()) return true;
    if (eq == std::string_view::npos) continue;
    std::string_view values = line.substr(eq + 1);
    while (true) {
      size_t comma = values.find(',');
      if (values.substr(0, comma) == value) return true;
      if (comma == std::string_view::npos) break;
      values.remove_prefix(comma + 1);
    }
  }
  return false;
}

}  // namespace relp
}  // namespace net
}  // namespace muon
