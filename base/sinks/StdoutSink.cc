#include "muon/base/StdoutSink.h"

#include "muon/base/LoggerConfig.h"

namespace muon {

void StdoutSink::append(const char* line, size_t len) { detail::defaultOutput(line, len); }

void StdoutSink::flush() { detail::defaultFlush(); }

}  // namespace muon
