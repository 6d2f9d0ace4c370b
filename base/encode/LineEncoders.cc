#include "muon/base/internal/LineEncoders.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "muon/base/internal/LineLayout.h"
#include "muon/base/JsonLines.h"
#include "muon/base/Logfmt.h"
#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

namespace muon {
namespace detail {

namespace {

// kText: the record's text is its line.
size_t textCapacity(const LogRecord& record) { return record.text.size(); }
size_t encodeText(const LogRecord& record, char* out) {
  std::memcpy(out, record.text.data(), record.text.size());
  return record.text.size();
}

constexpr LineEncoder kText{LineFormat::kText, &textCapacity, &encodeText};
constexpr LineEncoder kJson{LineFormat::kJson, &jsonCapacity, &encodeJson};
constexpr LineEncoder kLogfmt{LineFormat::kLogfmt, &logfmtCapacity, &encodeLogfmt};

}  // namespace

const LineEncoder& encoderFor(LineFormat format) {
  switch (format) {
    case LineFormat::kJson:
      return kJson;
    case LineFormat::kLogfmt:
      return kLogfmt;
    case LineFormat::kText:
      break;
  }
  return kText;
}

void appendEncoded(const LineEncoder& encoder, const LogRecord& record, std::string* out) {
  const size_t old = out->size();
  out->resize(old + encoder.capacity(record));
  out->resize(old + encoder.encode(record, out->data() + old));
}

bool isEncodedLine(const LineEncoder& encoder, std::string_view line) {
  switch (encoder.format) {
    case LineFormat::kJson:
      return !line.empty() && line.front() == '{';
    case LineFormat::kLogfmt:
      return line.compare(0, 5, "time=") == 0;
    case LineFormat::kText:
      break;
  }
  return true;
}

bool allEncodedLines(const LineEncoder& encoder, std::string_view chunk) {
  if (encoder.format == LineFormat::kText) return true;
  while (!chunk.empty()) {
    const size_t end = chunk.find('\n');
    if (!isEncodedLine(encoder, chunk.substr(0, end))) return false;
    if (end == std::string_view::npos) break;
    chunk.remove_prefix(end + 1);
  }
  return true;
}

void appendTextLines(const LineEncoder& encoder, std::string_view chunk, const TimeZone& zone,
                     FieldsInText fields, std::string* out) {
  while (!chunk.empty()) {
    const size_t end = chunk.find('\n');
    const size_t n = end == std::string_view::npos ? chunk.size() : end + 1;
    appendTextLine(encoder, chunk.substr(0, n), zone, fields, out);
    chunk.remove_prefix(n);
  }
}

std::string_view encodeGivenLines(const LineEncoder& encoder, std::string_view chunk,
                                  std::string* scratch) {
  scratch->clear();
  appendTextLines(encoder, chunk, Logger::timeZone(), FieldsInText::kNone, scratch);
  return *scratch;
}

void appendUnparsedLine(const LineEncoder& encoder, std::string_view line, std::string* out) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  switch (encoder.format) {
    case LineFormat::kJson:
      appendJsonMessage(line, out);
      return;
    case LineFormat::kLogfmt: {
      out->append("msg=", 4);
      const size_t at = out->size();
      out->append(line);
      out->resize(at + 2 + 6 * line.size());
      out->resize(at + encodeLogfmtValue(out->data() + at, line.size(), 2 + 6 * line.size(), true));
      out->push_back('\n');
      return;
    }
    case LineFormat::kText:
      break;
  }
  out->append(line);
  out->push_back('\n');
}

TextLineKind readTextLine(std::string_view line, const TimeZone& zone, FieldsInText fields,
                          std::string* storage, LogRecord* record) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.front() == '{') {
    // A JSON line: its parts read back.
    switch (readJsonLine(line, storage, record)) {
      case JsonLineKind::kParts:
        return TextLineKind::kParts;
      case JsonLineKind::kMessage:
        return TextLineKind::kMessage;
      case JsonLineKind::kOther:
        break;
    }
  }
  if (!parseLine(line, zone, record)) return TextLineKind::kOther;
  if (fields == FieldsInText::kRead) {
    const size_t begin = readLogfmtFields(record->message, [](const LogField&) {});
    if (begin < record->message.size()) {
      // The space before the first field goes with the fields, as a stream writes them.
      record->fields = record->message.substr(begin > 0 ? begin - 1 : 0);
    }
  }
  return TextLineKind::kParts;
}

void appendTextLine(const LineEncoder& encoder, std::string_view line, const TimeZone& zone,
                    FieldsInText fields, std::string* out) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (isEncodedLine(encoder, line)) {
    out->append(line);
    out->push_back('\n');
    return;
  }
  thread_local std::string storage;
  LogRecord record;
  switch (readTextLine(line, zone, fields, &storage, &record)) {
    case TextLineKind::kParts:
      appendEncoded(encoder, record, out);
      return;
    case TextLineKind::kMessage:
      appendUnparsedLine(encoder, record.message, out);
      return;
    case TextLineKind::kOther:
      break;
  }
  appendUnparsedLine(encoder, line, out);
}

void writeEncodedRecord(LineFormat format, const LogRecord& record,
                        void (*write)(void*, const char*, size_t), void* sink) {
  const LineEncoder& encoder = encoderFor(format);
  thread_local std::vector<char> line;  // kept: no allocation per line
  const size_t capacity = encoder.capacity(record);
  if (line.size() < capacity) line.resize(capacity);
  write(sink, line.data(), encoder.encode(record, line.data()));
}

size_t writeUtcSecond(char* p, int64_t second) {
  // Lines come many to a second: the second's text is made once per thread.
  struct Cache {
    int64_t second = INT64_MIN;
    char text[20];  // 2026-11-21T08:15:02.
  };
  thread_local Cache cache;
  if (cache.second != second) {
    writeDateTimeToSecond(cache.text, TimeZone::toUtcTime(second), true);
    cache.second = second;
  }
  std::memcpy(p, cache.text, sizeof cache.text);
  return sizeof cache.text;
}

}  // namespace detail
}  // namespace muon
