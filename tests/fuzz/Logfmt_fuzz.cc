// libFuzzer target for the logfmt encoder (Logfmt.h) checked with its parser:
// a field of any name and value bytes, written by a LogStream as a statement
// writes it (after a message of fuzzed words), must be read back by
// readLogfmtFields as one field at the message's end with the sanitized
// name and exactly the value's bytes (when the line had room for it); the
// line holds no raw control character. Arbitrary bytes fed to the parser
// alone must give fields that lie inside the message, in order.
#include <fuzzer/FuzzedDataProvider.h>

#include <memory>
#include <string>

#include "FuzzCheck.h"
#include "muon/base/LogStream.h"
#include "muon/base/Logfmt.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const bool text = in.ConsumeBool();
  const std::string name = in.ConsumeRandomLengthString(100);
  const std::string message = in.ConsumeRandomLengthString(200);
  const std::string value = in.ConsumeRemainingBytesAsString();

  // The parser alone, on arbitrary bytes.
  const std::string raw = message + value;
  size_t last = 0;
  const size_t begin = muon::detail::readLogfmtFields(raw, [&](const muon::detail::LogfmtField& f) {
    const size_t at = static_cast<size_t>(f.name.data() - raw.data());
    FUZZ_CHECK(at >= last && f.value.data() + f.value.size() <= raw.data() + raw.size());
    last = at;
    std::string unescaped;
    muon::detail::appendLogfmtValue(f, &unescaped);
  });
  FUZZ_CHECK(begin <= raw.size());

  // Encoder, then parser.
  auto stream = std::make_unique<muon::LogStream>();
  stream->append("m", 1);
  stream->beginField(name, text);
  *stream << value;
  stream->endField();
  const std::string line = stream->buffer().toString();
  for (char c : line) {
    const auto u = static_cast<unsigned char>(c);
    FUZZ_CHECK(u >= 0x20 && u != 0x7f);
  }
  int fields = 0;
  std::string got;
  std::string gotName;
  const size_t start = muon::detail::readLogfmtFields(line, [&](const muon::detail::LogfmtField& f) {
    ++fields;
    gotName.assign(f.name);
    muon::detail::appendLogfmtValue(f, &got);
  });
  FUZZ_CHECK(fields == 1 && start == 2);
  char expectedName[muon::detail::kMaxFieldName];
  FUZZ_CHECK(gotName == std::string(expectedName, muon::detail::writeFieldName(expectedName, name)));
  // Room for the whole value (quoted and escaped: at most 6 bytes a byte)
  // and the line's end: exactly the value.
  if (value.size() * 6 + 2 + 4 + muon::detail::kMaxFieldName + muon::LogStream::kLineEndRoom <
      muon::LogStream::kBufferSize) {
    FUZZ_CHECK(got == value);
  } else {
    FUZZ_CHECK(value.compare(0, got.size(), got) == 0);  // a cut value is a prefix
  }
  return 0;
}
