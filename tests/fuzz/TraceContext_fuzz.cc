// libFuzzer target for the W3C traceparent parser (TraceContext.h), which
// HttpServer runs on every request's header: any bytes either fail or give
// ids of lower-case hex, not all zeros, whose traceparent() parses back to
// the same context; a version-00 header is written back as it came (spaces
// and tabs around it aside), and a child keeps the trace and the flags.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "FuzzCheck.h"
#include "muon/base/TraceContext.h"

namespace {

bool validId(std::string_view id, size_t n) {
  if (id.size() != n || id.find_first_not_of("0123456789abcdef") != std::string_view::npos) return false;
  return id.find_first_not_of('0') != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string header(reinterpret_cast<const char*>(data), size);
  muon::TraceContext t;
  if (!muon::TraceContext::parse(header, &t)) return 0;
  FUZZ_CHECK(validId(t.traceId(), 32));
  FUZZ_CHECK(validId(t.spanId(), 16));
  const std::string written = t.traceparent();
  muon::TraceContext back;
  FUZZ_CHECK(muon::TraceContext::parse(written, &back));
  FUZZ_CHECK(back.traceId() == t.traceId() && back.spanId() == t.spanId() && back.flags() == t.flags());
  const size_t first = header.find_first_not_of(" \t");
  const size_t last = header.find_last_not_of(" \t");
  const std::string trimmed = header.substr(first, last - first + 1);
  if (trimmed.compare(0, 2, "00") == 0) FUZZ_CHECK(written == trimmed);
  const muon::TraceContext c = t.child();
  FUZZ_CHECK(c.traceId() == t.traceId() && c.flags() == t.flags() && validId(c.spanId(), 16));
  return 0;
}
