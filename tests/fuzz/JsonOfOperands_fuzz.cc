// libFuzzer target for the JSON encoder's route straight from a deferred
// record's operands (encodeJsonOfOperands, LineEncoders.h): the input is a
// program of << operands (strings of any bytes, numbers of any bits, chars,
// Fmt, fields with any name and value) recorded as a statement attached to
// AsyncLogging records them, at any level. The record is formatted as JSON
// by RecordFormatter with no tap (the operands route where it takes the
// record) and with one (always the text line's route). Checked: the two
// lines are the same bytes; the operands route takes every record whose
// operands are plain ASCII, message first and single-operand fields after
// (so that a route that declines everything fails too).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "FuzzCheck.h"
#include "JsonRoutes.h"
#include "muon/base/LogFields.h"
#include "muon/base/LogStream.h"
#include "muon/base/Logging.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LogSite.h"
#include "muon/base/internal/RecordFormatter.h"

namespace {

using muon::LogStream;
using muon::kv;

// Whether the operands route must take the record: only letters, digits and
// spaces in its strings and names, finite numbers, at INFO or above, the
// fields after the message, and few enough bytes.
struct Expectation {
  bool plain = true;
  bool sawField = false;
};

bool isPlain(const std::string& s, bool name) {
  if (name && s.empty()) return false;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!name && c == ' ');
    if (!ok) return false;
  }
  return true;
}

void streamProgram(FuzzedDataProvider& in, LogStream& s, Expectation* e) {
  const int count = in.ConsumeIntegralInRange(0, 12);
  for (int i = 0; i < count && in.remaining_bytes() > 0; ++i) {
    const int op = in.ConsumeIntegralInRange(0, 9);
    if (op < 5) {
      // A message operand; after a field the record is not the common shape.
      if (e->sawField) e->plain = false;
      switch (op) {
        case 0: {
          const std::string t = in.ConsumeRandomLengthString(64);
          if (!isPlain(t, false)) e->plain = false;
          s << t;
          break;
        }
        case 1:
          s << in.ConsumeIntegral<int64_t>();
          break;
        case 2:
          s << in.ConsumeIntegral<uint32_t>();
          break;
        case 3: {
          const double d = in.ConsumeFloatingPoint<double>();
          if (!std::isfinite(d)) e->plain = false;
          s << d;
          break;
        }
        default: {
          const char c = static_cast<char>(in.ConsumeIntegralInRange('a', 'z'));
          s << c;
          break;
        }
      }
      continue;
    }
    const std::string name = in.ConsumeRandomLengthString(12);
    if (!isPlain(name, true) || name.size() > 64) e->plain = false;
    e->sawField = true;
    switch (op) {
      case 5: {
        const std::string v = in.ConsumeRandomLengthString(32);
        if (!isPlain(v, false)) e->plain = false;
        s << kv(name, v);
        break;
      }
      case 6:
        s << kv(name, in.ConsumeIntegral<int32_t>());
        break;
      case 7: {
        const double d = in.ConsumeFloatingPoint<double>();
        if (!std::isfinite(d)) e->plain = false;
        s << kv(name, d);
        break;
      }
      case 8:
        s << kv(name, in.ConsumeBool());
        break;
      default:
        s << kv(name, muon::Fmt("%d", in.ConsumeIntegral<int16_t>()));
        break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int level = in.ConsumeIntegralInRange(0, muon::detail::kLevelCount - 1);
  LogStream stream;
  stream.startRecording([](void*, LogStream&) {}, nullptr);
  Expectation e;
  streamProgram(in, stream, &e);
  if (!stream.recording()) return 0;  // fell back to text: no record to format

  // The site: its path any bytes (a name the JSON escapes is copied only
  // where it needs none), its line any number.
  const std::string path = in.ConsumeRandomLengthString(48);
  const muon::detail::LogSite site{path.c_str(), in.ConsumeIntegral<int>()};
  const muon::test::RecordedStatement r(
      stream, level, in.ConsumeIntegralInRange<int64_t>(0, 253402300799999999), &site);
  const muon::test::JsonRoutes routes = muon::test::jsonRoutes(r);
  FUZZ_CHECK(routes.direct == routes.text);
  FUZZ_CHECK(routes.written <= muon::detail::kMaxJsonOfOperands);
  const bool took = routes.written != 0;
  const size_t length = stream.buffer().length();
  if (e.plain && level >= muon::Logger::INFO && length <= muon::detail::kMaxOperandsOfJson) {
    FUZZ_CHECK(took);
  }
  return 0;
}
