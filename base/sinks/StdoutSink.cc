#include "muon/base/StdoutSink.h"

#include <string>

#include "muon/base/internal/LoggerConfig.h"
#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

namespace muon {

void StdoutSink::append(const char* line, size_t len) {
  // Text, or a JSON line made from a statement's record.
  if (format_ == LineFormat::kText || detail::allJsonObjects(std::string_view(line, len))) {
    detail::defaultOutput(line, len);
    return;
  }
  thread_local std::string json;  // kept: no allocation per line
  json.clear();
  detail::appendJsonLines(std::string_view(line, len), Logger::timeZone(),
                          detail::FieldsInText::kNone, &json);
  detail::defaultOutput(json.data(), json.size());
}

void StdoutSink::flush() { detail::defaultFlush(); }

}  // namespace muon
