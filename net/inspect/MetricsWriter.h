// MetricsWriter: builds a page in Prometheus's text exposition format,
// version 0.0.4 (the Content-Type is kContentType). One family at a time:
// family() writes its "# HELP" and "# TYPE" lines, sample() its samples,
// which must follow before the next family. Label values and help texts are
// escaped as the format asks; names are the caller's and must match
// [a-zA-Z_:][a-zA-Z0-9_:]* (metric) and [a-zA-Z_][a-zA-Z0-9_]* (label).
// A value; not thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace muon {
namespace net {

class MetricsWriter {
 public:
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

  enum Type { kCounter, kGauge };
  using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  void family(std::string_view name, Type type, std::string_view help);
  // A sample of the current family (its name is the family's).
  void sample(Labels labels, uint64_t value);
  void sample(Labels labels, double value);

  const std::string& text() const { return text_; }

  // For tests and for callers that check a name before use.
  static bool validMetricName(std::string_view name);
  static bool validLabelName(std::string_view name);

 private:
  void labels(Labels labels);

  std::string name_;
  std::string text_;
};

}  // namespace net
}  // namespace muon
