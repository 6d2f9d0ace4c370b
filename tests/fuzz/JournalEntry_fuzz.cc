// libFuzzer target for the journal entry encoder (JournalFormat.h), checked
// with a parser of journald's native protocol: for a record with any
// message, function, file and fields, encodeRecord() gives fields each
// "NAME=value\n" or "NAME\n<le64 length><bytes>\n", nothing after the last;
// every NAME 1-64 bytes of [A-Z0-9_], not starting with '_' or a digit; a
// plain value with no '\n'; MESSAGE first, PRIORITY a severity 0-7; and one
// journal field per record field, in order, each with the bytes its
// value stands for.
#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <utility>
#include <vector>

#include "FuzzCheck.h"
#include "FuzzedRecord.h"
#include "muon/base/LogRecord.h"
#include "muon/base/LogStream.h"
#include "muon/base/Logfmt.h"
#include "muon/base/internal/JournalFormat.h"
#include "muon/base/internal/LineLayout.h"

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

bool validName(const std::string& name) {
  if (name.empty() || name.size() > muon::journal::kMaxNameLength) return false;
  if (name[0] == '_' || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// Parses an entry; false if it breaks the protocol.
bool parseEntry(const std::string& entry, Fields* fields) {
  size_t i = 0;
  while (i < entry.size()) {
    const size_t end = entry.find_first_of("=\n", i);
    if (end == std::string::npos) return false;
    std::string name = entry.substr(i, end - i);
    if (!validName(name)) return false;
    if (entry[end] == '=') {
      const size_t nl = entry.find('\n', end + 1);
      if (nl == std::string::npos) return false;
      fields->emplace_back(std::move(name), entry.substr(end + 1, nl - end - 1));
      i = nl + 1;
      continue;
    }
    if (entry.size() - end - 1 < 8) return false;
    uint64_t length = 0;
    for (int b = 7; b >= 0; --b) {
      length = length << 8 | static_cast<unsigned char>(entry[end + 1 + static_cast<size_t>(b)]);
    }
    const size_t at = end + 9;
    if (length > entry.size() - at || at + length >= entry.size() || entry[at + length] != '\n') {
      return false;
    }
    fields->emplace_back(std::move(name), entry.substr(at, length));
    i = at + length + 1;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  muon::LogStream stream;
  stream << in.ConsumeRandomLengthString(64);
  const int count = in.ConsumeIntegralInRange(0, 20);
  std::vector<std::string> values;
  for (int k = 0; k < count; ++k) {
    stream.beginField(in.ConsumeRandomLengthString(12), true);
    values.push_back(in.ConsumeRandomLengthString(24));
    stream << values.back();
    stream.endField();
  }
  stream.closeFields();
  const std::string_view text = stream.buffer().toStringView();
  muon::LogRecord record;
  std::string function, file;
  fuzzRecordParts(in, &record, &function, &file);
  record.message = text;
  record.fields = text.substr(stream.trailingFieldsFrom(text.size()));
  std::string entry;
  muon::journal::encodeRecord(record, in.ConsumeRandomLengthString(16), &entry);
  Fields fields;
  FUZZ_CHECK(parseEntry(entry, &fields));
  FUZZ_CHECK(fields.size() >= 4 && fields[0].first == "MESSAGE" && fields[1].first == "PRIORITY");
  FUZZ_CHECK(fields[1].second.size() == 1 && fields[1].second[0] >= '0' && fields[1].second[0] <= '7');
  // The record's own fields come last, one journal field each, with the
  // bytes of the values the statement gave.
  std::vector<std::string> given;
  muon::detail::readLogfmtFields(record.fields, [&](const muon::LogField& f) {
    std::string v;
    muon::detail::appendLogfmtValue(f, &v);
    given.push_back(v);
  });
  FUZZ_CHECK(fields.size() >= given.size());
  const size_t first = fields.size() - given.size();
  for (size_t k = 0; k < given.size(); ++k) FUZZ_CHECK(fields[first + k].second == given[k]);
  if (given.size() == values.size()) {
    for (size_t k = 0; k < given.size(); ++k) FUZZ_CHECK(given[k] == values[k]);
  }
  return 0;
}
