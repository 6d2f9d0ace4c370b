#include "muon/net/inspect/MetricsWriter.h"

#include <cassert>
#include <cmath>
#include <cstdio>

namespace muon {
namespace net {

namespace {

bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// HELP text: backslash and line feed escaped; label values also '"'.
void appendEscaped(std::string* out, std::string_view s, bool quotes) {
  for (char c : s) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c == '"' && quotes) {
      *out += "\\\"";
    } else {
      *out += c;
    }
  }
}

}  // namespace

bool MetricsWriter::validMetricName(std::string_view name) {
  if (name.empty() || !(isAlpha(name[0]) || name[0] == ':')) return false;
  for (char c : name) {
    if (!(isAlpha(c) || isDigit(c) || c == ':')) return false;
  }
  return true;
}

bool MetricsWriter::validLabelName(std::string_view name) {
  if (name.empty() || !isAlpha(name[0])) return false;
  for (char c : name) {
    if (!(isAlpha(c) || isDigit(c))) return false;
  }
  return name.substr(0, 2) != "__";  // reserved for Prometheus itself
}

void MetricsWriter::family(std::string_view name, Type type, std::string_view help) {
  assert(validMetricName(name));
  name_.assign(name);
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  appendEscaped(&text_, help, false);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += type == kCounter ? " counter\n" : " gauge\n";
}

void MetricsWriter::labels(Labels labels) {
  text_ += name_;
  if (labels.size() == 0) return;
  text_ += '{';
  bool first = true;
  for (const auto& [key, value] : labels) {
    assert(validLabelName(key));
    if (!first) text_ += ',';
    first = false;
    text_ += key;
    text_ += "=\"";
    appendEscaped(&text_, value, true);
    text_ += '"';
  }
  text_ += '}';
}

void MetricsWriter::sample(Labels labels, uint64_t value) {
  this->labels(labels);
  text_ += ' ';
  text_ += std::to_string(value);
  text_ += '\n';
}

void MetricsWriter::sample(Labels labels, double value) {
  this->labels(labels);
  char buf[64];
  if (std::isnan(value)) {
    std::snprintf(buf, sizeof buf, " NaN\n");
  } else if (std::isinf(value)) {
    std::snprintf(buf, sizeof buf, value > 0 ? " +Inf\n" : " -Inf\n");
  } else {
    std::snprintf(buf, sizeof buf, " %.17g\n", value);
  }
  text_ += buf;
}

}  // namespace net
}  // namespace muon
