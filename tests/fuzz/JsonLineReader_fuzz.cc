// libFuzzer target for the JSON line reader (JsonLines.h, readJsonLine),
// which muon-ship runs on every line of a JSON log file: any bytes are
// either not muon's (kOther) or a line that a real JSON parser
// (nlohmann::json) takes as an object; what it reads, written again
// (the JSON encoder), reads back to the same parts; and the line the writer
// makes of fuzzed parts reads back to them.
#include <fuzzer/FuzzedDataProvider.h>

#include <nlohmann/json.hpp>
#include <string>

#include "FuzzCheck.h"
#include "muon/base/JsonLines.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/LogRecord.h"

namespace {

bool sameParts(const muon::LogRecord& a, const muon::LogRecord& b) {
  return a.time == b.time && a.level == b.level && a.tid == b.tid &&
         a.function == b.function && a.message == b.message && a.fields == b.fields &&
         a.file == b.file && a.line == b.line;
}

// Reads `line`; if it is a line, checks that its JSON parses and that it
// reads the same once written again.
void checkRead(const std::string& line) {
  std::string storage;
  muon::LogRecord parts;
  const muon::detail::JsonLineKind kind = muon::detail::readJsonLine(line, &storage, &parts);
  if (kind == muon::detail::JsonLineKind::kOther) return;
  std::string text = line;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  FUZZ_CHECK(!j.is_discarded() && j.is_object());
  if (kind == muon::detail::JsonLineKind::kMessage) return;
  FUZZ_CHECK(parts.message.data() + parts.message.size() ==
             parts.fields.data() + parts.fields.size());
  std::string again;
  muon::detail::appendEncoded(muon::detail::encoderFor(muon::LineFormat::kJson), parts, &again);
  std::string storage2;
  muon::LogRecord parts2;
  FUZZ_CHECK(muon::detail::readJsonLine(again, &storage2, &parts2) ==
             muon::detail::JsonLineKind::kParts);
  FUZZ_CHECK(sameParts(parts, parts2));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  if (in.ConsumeBool()) {  // any bytes as a line
    checkRead(in.ConsumeRemainingBytesAsString());
    return 0;
  }
  // A line written from fuzzed parts (valid UTF-8 kept: the writer turns
  // other bytes into U+FFFD), its fields as a stream writes them.
  muon::LogRecord parts;
  parts.time = muon::Timestamp(in.ConsumeIntegralInRange<int64_t>(0, 253402300799999999));  // to 9999
  parts.level = static_cast<muon::Logger::LogLevel>(
      in.ConsumeIntegralInRange(0, muon::detail::kLevelCount - 1));
  parts.tid = in.ConsumeIntegralInRange(0, 999999999);
  const std::string function = in.ConsumeRandomLengthString(16);
  const std::string file = in.ConsumeRandomLengthString(16);
  const std::string message = in.ConsumeRandomLengthString(64);
  const std::string whole = message + in.ConsumeRemainingBytesAsString();
  parts.function = function;
  parts.file = file;
  parts.line = file.empty() ? 0 : 42;
  parts.message = whole;
  parts.fields = std::string_view(whole).substr(message.size());
  std::string line;
  muon::detail::appendEncoded(muon::detail::encoderFor(muon::LineFormat::kJson), parts, &line);
  checkRead(line);
  return 0;
}
