// libFuzzer target for the syslog STRUCTURED-DATA encoder (SyslogFormat.h)
// checked with a parser of RFC 5424's grammar: for a message ending in fields
// with any names and values, structuredData() gives one SD-ELEMENT whose
// SD-NAMEs are 1-32 printable ASCII bytes other than '=', ' ', ']' and '"',
// whose PARAM-VALUEs escape '"', '\' and ']' and hold valid UTF-8 without
// control characters, one param per field, in order; a value of printable
// ASCII comes back exactly.
#include <fuzzer/FuzzedDataProvider.h>

#include <memory>
#include <string>
#include <vector>

#include "FuzzCheck.h"
#include "muon/base/JsonLines.h"
#include "muon/base/LogStream.h"
#include "muon/base/SyslogFormat.h"

namespace {

struct Param {
  std::string name;
  std::string value;
};

// Parses `[SD-ID *(SP PARAM)]`; false if it breaks the grammar.
bool parseElement(const std::string& sd, std::vector<Param>* params) {
  size_t i = 0;
  if (sd.empty() || sd[i++] != '[') return false;
  const std::string id(muon::rfc5424::kStructuredDataId);
  if (sd.compare(i, id.size(), id) != 0) return false;
  i += id.size();
  while (i < sd.size() && sd[i] == ' ') {
    ++i;
    Param p;
    while (i < sd.size() && sd[i] != '=') {
      const unsigned char c = static_cast<unsigned char>(sd[i]);
      if (c <= 32 || c >= 127 || c == ']' || c == '"') return false;
      p.name += sd[i++];
    }
    if (p.name.empty() || p.name.size() > 32 || i + 1 >= sd.size() || sd[i + 1] != '"') return false;
    i += 2;
    while (i < sd.size() && sd[i] != '"') {
      const unsigned char c = static_cast<unsigned char>(sd[i]);
      if (c < 0x20 || c == 0x7f || c == ']') return false;
      if (c == '\\') {
        if (i + 1 >= sd.size()) return false;
        const char e = sd[i + 1];
        if (e == '"' || e == '\\' || e == ']') {
          p.value += e;
          i += 2;
          continue;
        }
      }
      p.value += sd[i++];
    }
    if (i >= sd.size()) return false;
    ++i;  // the closing quote
    params->push_back(p);
  }
  return i + 1 == sd.size() && sd[i] == ']';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  auto stream = std::make_unique<muon::LogStream>();
  *stream << "message";
  std::vector<std::string> values;
  while (in.remaining_bytes() > 0 && values.size() < 8) {
    const std::string name = in.ConsumeRandomLengthString(40);
    values.push_back(in.ConsumeRandomLengthString(100));
    stream->beginField(name, true);
    *stream << values.back();
    stream->endField();
  }
  const std::string sd = muon::rfc5424::structuredData(stream->buffer().toStringView());
  if (values.empty()) {
    FUZZ_CHECK(sd.empty());
    return 0;
  }
  std::vector<Param> params;
  FUZZ_CHECK(parseElement(sd, &params));
  FUZZ_CHECK(params.size() == values.size());
  for (size_t k = 0; k < params.size(); ++k) {
    const std::string& v = params[k].value;
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    for (size_t i = 0; i < v.size();) {  // valid UTF-8
      const size_t n = p[i] < 0x80 ? 1 : muon::detail::utf8SequenceLength(p + i, v.size() - i);
      FUZZ_CHECK(n > 0);
      i += n;
    }
    bool printable = true;
    for (char c : values[k]) {
      const auto u = static_cast<unsigned char>(c);
      printable = printable && u >= 0x20 && u < 0x7f;
    }
    if (printable) FUZZ_CHECK(v == values[k]);
  }
  return 0;
}
