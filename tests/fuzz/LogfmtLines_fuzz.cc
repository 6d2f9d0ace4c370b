// libFuzzer target for the logfmt line encoder (LineFormat::kLogfmt,
// LineEncoders.h) checked with a logfmt parser of the tests' own
// (LogfmtParser.h): every line of any input (but one that starts "time=",
// which the encoder takes to be a logfmt line already and keeps) becomes
// exactly one line that parses as logfmt with a msg; a record whose message and fields a stream
// wrote (the spans the backend takes them from, or, cut, its text) becomes
// a line with time, level, thread and msg first, the message's bytes back
// from msg and each field's from its key; and a value's logfmt form is
// the same from the encoders' writer and the stream's in-place encoder.
#include <fuzzer/FuzzedDataProvider.h>

#include <string>

#include "FuzzCheck.h"
#include "FuzzedRecord.h"
#include "LogfmtParser.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/LogRecord.h"
#include "muon/base/LogStream.h"
#include "muon/base/TimeZone.h"

namespace {

using muon::test::Pairs;

// Each line of `out` parses, with a msg; as many lines as `in` has.
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
    Pairs pairs;
    FUZZ_CHECK(muon::test::parseLogfmt(out.substr(start, end - start), &pairs));
    bool msg = false;
    for (const auto& p : pairs) msg = msg || p.first == "msg";
    FUZZ_CHECK(msg);
    ++linesOut;
    start = end + 1;
  }
  FUZZ_CHECK(linesOut == linesIn);
}

std::string valueOf(const muon::LogField& f) {
  std::string bytes;
  muon::detail::appendLogfmtValue(f, &bytes);
  return bytes;
}

// The encoders' writer of a value gives the bytes the stream's in-place
// encoder gives.
void checkSameValue(const std::string& v, bool text) {
  std::string inPlace(2 + 6 * v.size(), '\0');
  inPlace.replace(0, v.size(), v);
  inPlace.resize(muon::detail::encodeLogfmtValue(inPlace.data(), v.size(), inPlace.size(), text));
  std::string written(2 + 6 * v.size(), '\0');
  written.resize(muon::detail::writeLogfmtValue(written.data(), v.data(), v.size(), text));
  FUZZ_CHECK(inPlace == written);
}

void checkRecord(FuzzedDataProvider& in) {
  checkSameValue(in.ConsumeRandomLengthString(64), in.ConsumeBool());
  muon::LogStream stream;
  muon::detail::FieldSpans spans;
  stream.keepFieldSpans(&spans);
  stream << in.ConsumeRandomLengthString(64);
  const int fields = in.ConsumeIntegralInRange(0, 40);
  for (int k = 0; k < fields; ++k) {
    stream.beginField(in.ConsumeRandomLengthString(12), true);
    stream << in.ConsumeRandomLengthString(24);
    stream.endField();
  }
  stream.closeFields();
  const std::string_view text = stream.buffer().toStringView();
  const size_t from = stream.trailingFieldsFrom(text.size());
  muon::LogField list[muon::detail::FieldSpans::kMax];
  muon::LogRecord record;
  std::string function, file;
  fuzzRecordParts(in, &record, &function, &file);
  record.message = text;
  record.fields = text.substr(from);
  if (spans.complete && spans.count > 0 && in.ConsumeBool()) {
    for (uint32_t i = 0; i < spans.count; ++i) {
      const auto& s = spans.at[i];
      list[i].name = text.substr(s.begin + 1u, s.equals - s.begin - 1u);
      list[i].value = text.substr(s.equals + 1u, s.end - s.equals - 1u);
      list[i].quoted = !list[i].value.empty() && list[i].value[0] == '"';
    }
    record.fieldList = list;
    record.fieldCount = spans.count;
  }
  std::string line;
  muon::detail::appendEncoded(muon::detail::encoderFor(muon::LineFormat::kLogfmt), record, &line);
  FUZZ_CHECK(!line.empty() && line.back() == '\n' && line.find('\n') == line.size() - 1);
  line.pop_back();
  Pairs pairs;
  FUZZ_CHECK(muon::test::parseLogfmt(line, &pairs));
  FUZZ_CHECK(pairs.size() >= 4 && pairs[0].first == "time" && pairs[1].first == "level" &&
             pairs[2].first == "thread");
  // The parts, then the fields, each its bytes.
  size_t at = 3;
  if (!function.empty()) {
    FUZZ_CHECK(pairs[at].first == "func" && pairs[at].second == function);
    ++at;
  }
  FUZZ_CHECK(pairs[at].first == "msg");
  const std::string message = pairs[at++].second;
  if (!file.empty()) {
    FUZZ_CHECK(pairs[at].first == "file" && pairs[at].second == file);
    FUZZ_CHECK(pairs[at + 1].first == "line" && pairs[at + 1].second == "42");
    at += 2;
  }
  if (record.fieldCount > 0) {
    FUZZ_CHECK(message == std::string(text.substr(0, from)));
    FUZZ_CHECK(pairs.size() - at == record.fieldCount);
    for (size_t i = 0; i < record.fieldCount; ++i) {
      const std::string name(list[i].name);
      const bool reserved = muon::detail::isReservedLogfmtKey(name);
      FUZZ_CHECK(pairs[at + i].first == (reserved ? "fields." + name : name));
      FUZZ_CHECK(pairs[at + i].second == valueOf(list[i]));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  if (in.ConsumeBool()) {  // any bytes as lines, none a logfmt line already
    std::string bytes = in.ConsumeRemainingBytesAsString();
    for (size_t at = 0; at != std::string::npos;) {
      if (bytes.compare(at, 5, "time=") == 0) bytes[at] = 'T';
      at = bytes.find('\n', at);
      if (at != std::string::npos) ++at;
    }
    std::string out;
    muon::detail::appendTextLines(muon::detail::encoderFor(muon::LineFormat::kLogfmt), bytes,
                                  muon::TimeZone(), muon::detail::FieldsInText::kRead, &out);
    checkLines(bytes, out);
    return 0;
  }
  checkRecord(in);
  return 0;
}
