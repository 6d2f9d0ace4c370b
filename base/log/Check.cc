#include "muon/base/Logging.h"

namespace muon {
namespace detail {

CheckOpFailure makeCheckOpFailure(const char* expression, const std::string& a,
                                  const std::string& b) {
  std::string text = "Check failed: ";
  text += expression;
  text += " (";
  text += a;
  text += " vs. ";
  text += b;
  text += ") ";
  return CheckOpFailure(std::move(text));
}

void checkNotNullFailed(const LogSite& site, const char* message) {
  Logger(site, Logger::FATAL).stream() << message;
  __builtin_unreachable();  // a FATAL Logger aborts when it is destroyed
}

}  // namespace detail
}  // namespace muon
