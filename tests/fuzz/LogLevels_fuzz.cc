// libFuzzer target for the MUON_LOG_LEVEL syntax (Logger::setLogLevels):
// "LEVEL" or "PATTERN=LEVEL", comma-separated, patterns being basenames or
// path globs. Whatever the text, a spec is taken whole or refused with a
// reason, and the statements below still run against whatever it set.
#include <cstdint>
#include <string>

#include "FuzzCheck.h"
#include "muon/base/Logging.h"

namespace {
void discard(const char*, size_t) {}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool once = [] {
    muon::Logger::setOutput(&discard);
    return true;
  }();
  (void)once;
  std::string spec(reinterpret_cast<const char*>(data), size);
  spec = spec.substr(0, spec.find('\0'));  // the environment cannot hold a NUL
  std::string error;
  bool ok = muon::Logger::setLogLevels(spec.c_str(), &error);
  FUZZ_CHECK(ok == error.empty());
  // Sites resolved against the new configuration: this file, by its
  // basename and its path.
  LOG_TRACE << "trace " << size;
  LOG_DEBUG << "debug " << size;
  LOG_INFO << "info " << size;
  LOG_WARN << "warn " << size;
  FUZZ_CHECK(muon::Logger::setLogLevels("info", &error));
  return 0;
}
