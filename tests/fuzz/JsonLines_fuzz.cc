// libFuzzer target for the JSON lines encoder (JsonLines.h) checked with a
// real JSON parser (nlohmann::json): every line of any input (but one that
// starts with '{', which the encoder takes to be a JSON object already and
// keeps), and any line in muon's layout with a fuzzed message and fields,
// becomes exactly one line that parses as one JSON object with a message;
// a string of valid UTF-8 comes back exactly.
#include <fuzzer/FuzzedDataProvider.h>

#include <nlohmann/json.hpp>
#include <string>

#include "FuzzCheck.h"
#include "muon/base/JsonLines.h"
#include "muon/base/LogStream.h"
#include "muon/base/TimeZone.h"

namespace {

// Lines out: one per line in.
void checkLines(const std::string& in, const std::string& out) {
  size_t linesIn = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\n' || i + 1 == in.size()) ++linesIn;
  }
  size_t linesOut = 0;
  size_t start = 0;
  while (start < out.size()) {
    const size_t end = out.find('\n', start);
    FUZZ_CHECK(end != std::string::npos);
    const nlohmann::json j = nlohmann::json::parse(out.substr(start, end - start), nullptr, false);
    FUZZ_CHECK(!j.is_discarded() && j.is_object() && j.contains("message"));
    ++linesOut;
    start = end + 1;
  }
  FUZZ_CHECK(linesOut == linesIn);
}

bool validUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const size_t n = muon::detail::utf8SequenceLength(p + i, s.size() - i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int mode = in.ConsumeIntegralInRange(0, 2);
  const std::string bytes = in.ConsumeRemainingBytesAsString();
  const muon::TimeZone utc;
  std::string out;
  if (mode == 0) {  // any bytes as lines, none a JSON object already
    std::string lines = bytes;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i] == '{' && (i == 0 || lines[i - 1] == '\n')) lines[i] = '(';
    }
    muon::detail::appendJsonLines(lines, utc, muon::detail::FieldsInText::kRead, &out);
    checkLines(lines, out);
  } else if (mode == 1) {  // a line in muon's layout, its message and fields fuzzed
    std::string line = "20261121 08:15:02.123456Z  4321 DEBUG ";
    for (char c : bytes) line += c == '\n' ? ' ' : c;
    line += " - f.cc:42\n";
    muon::detail::appendJsonLines(line, utc, muon::detail::FieldsInText::kRead, &out);
    checkLines(line, out);
    const nlohmann::json j = nlohmann::json::parse(out);
    FUZZ_CHECK(j.at("log.level") == "DEBUG" && j.at("log.origin.file.line") == 42);
  } else {  // a string
    muon::detail::appendJsonString(bytes, &out);
    const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
    FUZZ_CHECK(j.is_string());
    if (validUtf8(bytes)) FUZZ_CHECK(j.get<std::string>() == bytes);
  }
  return 0;
}
