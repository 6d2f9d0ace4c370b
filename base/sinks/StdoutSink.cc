#include "muon/base/StdoutSink.h"

#include <string>

#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LoggerConfig.h"
#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

namespace muon {

StdoutSink::StdoutSink(LineFormat format)
    : format_(format), encoder_(detail::encoderFor(format)) {}

void StdoutSink::append(const char* line, size_t len) {
  // Lines in its format (text, or a line made from a statement's record),
  // or text given to it directly.
  const std::string_view chunk(line, len);
  if (detail::allEncodedLines(encoder_, chunk)) {
    detail::defaultOutput(line, len);
    return;
  }
  thread_local std::string encoded;  // kept: no allocation per line
  const std::string_view lines = detail::encodeGivenLines(encoder_, chunk, &encoded);
  detail::defaultOutput(lines.data(), lines.size());
}

void StdoutSink::flush() { detail::defaultFlush(); }

}  // namespace muon
