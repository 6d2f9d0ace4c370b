#include "muon/base/JsonLines.h"

#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/Logfmt.h"
#include "muon/base/LogRecord.h"
#include "muon/base/TimeZone.h"
#include "muon/base/Timestamp.h"

namespace muon {
namespace detail {

void appendJsonMessage(std::string_view line, std::string* out) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  out->append("{\"message\":", 11);
  appendJsonString(line, out);
  out->append("}\n", 2);
}

void appendJsonLine(std::string_view line, const TimeZone& zone, FieldsInText fields,
                    std::string* out) {
  appendTextLine(encoderFor(LineFormat::kJson), line, zone, fields, out);
}

bool allJsonObjects(std::string_view chunk) {
  return allEncodedLines(encoderFor(LineFormat::kJson), chunk);
}

void appendJsonLines(std::string_view chunk, const TimeZone& zone, FieldsInText fields,
                     std::string* out) {
  appendTextLines(encoderFor(LineFormat::kJson), chunk, zone, fields, out);
}

}  // namespace detail
}  // namespace muon
