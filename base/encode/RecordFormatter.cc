#include "muon/base/internal/RecordFormatter.h"

#include <algorithm>
#include <cstring>

#include "muon/base/internal/LogSite.h"
#include "muon/base/Logging.h"
#include "muon/base/internal/OperandReplay.h"
#include "muon/base/TimeZone.h"

namespace muon {
namespace detail {

namespace {

// The fields of the text line `text` that its stream kept in `spans`, its
// run of them [fieldsFrom, messageEnd), into `fields`; their count, 0 where
// the spans do not describe the run (the encoders then read the run).
size_t fieldsOf(const char* text, const FieldSpans& spans, size_t fieldsFrom, size_t messageEnd,
                LogField* fields) {
  if (!spans.complete || spans.count == 0 || spans.at[0].begin != fieldsFrom ||
      spans.at[spans.count - 1].end != messageEnd) {
    return 0;
  }
  for (uint32_t i = 0; i < spans.count; ++i) {
    const FieldSpans::Span& s = spans.at[i];
    LogField& f = fields[i];
    f.name = std::string_view(text + s.begin + 1, s.equals - s.begin - 1u);
    f.value = std::string_view(text + s.equals + 1, s.end - s.equals - 1u);
    f.quoted = !f.value.empty() && f.value[0] == '"';
  }
  return spans.count;
}

// The message of a TRACE or DEBUG line starts with the function's name
// and a space (Logger's constructor writes them first); it goes apart.
void splitFunction(LogRecord* record) {
  if (record->level > Logger::DEBUG) return;
  const size_t space = record->message.find(' ');
  if (space == std::string_view::npos) return;
  record->function = record->message.substr(0, space);
  record->message.remove_prefix(space + 1);
}

}  // namespace

size_t RecordFormatter::formatOther(const RecordHeader& record, LinePrefix& prefix, int tid,
                                    std::string_view tidText, char* out, LineTap* tap) {
  size_t fieldsFrom = 0;
  if (record.kind == RecordHeader::kText) {
    const size_t n = formatText(record, prefix, tidText, out, &fieldsFrom, nullptr);
    if (tap != nullptr) tapWholeLine(out, n, tap);
    return n;
  }
  if (encoder_.format == LineFormat::kJson && tap == nullptr) {
    // JSON straight from the operands where that gives the same bytes.
    OperandLine line;
    timeOf(record, &line.second, &line.micro);
    line.level = record.level;
    line.tid = tid;
    line.tidText = tidText;
    line.where = &record.site->where;
    line.operands = reinterpret_cast<const char*>(&record + 1);
    line.length = record.length;
    const size_t n = encodeJsonOfOperands(line, out);
    if (n != 0) return n;
  }
  // The text line, and its parts: to the tap, or for the encoder.
  const bool text = encoder_.format == LineFormat::kText;
  char* const line = text ? out : text_;
  const size_t n = formatText(record, prefix, tidText, line, &fieldsFrom, &spans_);
  const LogRecord parts = partsOf(record, prefix, tid, line, n, fieldsFrom);
  if (tap != nullptr) tap->take(parts);
  return text ? n : encoder_.encode(parts, out);
}

LogRecord RecordFormatter::partsOf(const RecordHeader& record, const LinePrefix& prefix, int tid,
                                   const char* text, size_t n, size_t fieldsFrom) {
  const SourceLocation& where = record.site->where;
  const size_t messageEnd = n - where.length;
  LogRecord parts;
  parts.time = Timestamp(prefix.second * Timestamp::kMicroSecondsPerSecond + micro_);
  parts.level = static_cast<Logger::LogLevel>(record.level < kLevelCount ? record.level
                                                                          : kLevelCount - 1);
  parts.tid = tid;
  parts.message = std::string_view(text + header_, messageEnd - header_);
  parts.fields = std::string_view(text + fieldsFrom, messageEnd - fieldsFrom);
  parts.fieldList = fields_;
  parts.fieldCount = fieldsOf(text, spans_, fieldsFrom, messageEnd, fields_);
  splitFunction(&parts);
  parts.file = std::string_view(text + messageEnd + SourceLocation::kFileOffset, where.fileLength);
  parts.line = where.line;
  parts.text = std::string_view(text, n);
  return parts;
}

void RecordFormatter::tapWholeLine(const char* line, size_t n, LineTap* tap) {
  tapLine(std::string_view(line, n), Logger::timeZone(), tap);
}

namespace {

// formatRecordedLine, and where its fields begin (*fieldsFrom), their
// spans kept in *spans if given.
size_t formatRecordedLineText(const char* p, size_t n, char* out, size_t* fieldsFrom, bool* cut,
                              FieldSpans* spans) {
  if (n < kRecordedLineHeader) return 0;
  const size_t head = static_cast<unsigned char>(p[0]);
  const size_t trailer = static_cast<unsigned char>(p[1]);
  if (head > kMaxRecordedHead || trailer == 0 || trailer > SourceLocation::kCapacity ||
      kRecordedLineHeader + head + trailer > n || p[n - 1] != '\n') {
    return 0;
  }
  const char* operands = p + kRecordedLineHeader + head;
  const size_t operandBytes = n - kRecordedLineHeader - head - trailer;
  LogStream stream;
  LogStream::Buffer& buf = stream.buffer();
  buf.redirect(out);
  buf.append(p + kRecordedLineHeader, head);
  stream.keepFieldSpans(spans);
  if (!replayOperands(operands, operandBytes, stream)) return 0;
  stream.closeFields();
  const bool wasCut = appendTrailerBytes(stream, operands + operandBytes, trailer);
  if (cut != nullptr) *cut = wasCut;
  *fieldsFrom = stream.trailingFieldsFrom(buf.length() - trailer);
  return buf.length();
}

}  // namespace

void tapLine(std::string_view line, const TimeZone& zone, LineTap* tap) {
  thread_local std::string storage;
  LogRecord record;
  switch (readTextLine(line, zone, FieldsInText::kNone, &storage, &record)) {
    case TextLineKind::kParts:
      record.text = line;
      break;
    case TextLineKind::kMessage: {
      const std::string_view message = record.message;
      record = LogRecord();
      record.message = message;
      record.text = line;
      break;
    }
    case TextLineKind::kOther:
      record = LogRecord();
      record.message = line.substr(0, line.size() - (!line.empty() && line.back() == '\n'));
      record.text = line;
      break;
  }
  tap->take(record);
}

void tapLines(std::string_view chunk, const TimeZone& zone, LineTap* tap) {
  while (!chunk.empty()) {
    const size_t end = chunk.find('\n');
    const size_t n = end == std::string_view::npos ? chunk.size() : end + 1;
    tapLine(chunk.substr(0, n), zone, tap);
    chunk.remove_prefix(n);
  }
}

size_t formatRecordedLine(const char* p, size_t n, char* out, bool* cut) {
  size_t fieldsFrom;
  return formatRecordedLineText(p, n, out, &fieldsFrom, cut, nullptr);
}

bool appendRecordedLineAs(const LineEncoder& encoder, const char* p, size_t n,
                          const TimeZone& zone, std::string* out, bool* cut) {
  char text[RecordFormatter::kMaxLine];
  size_t fieldsFrom;
  FieldSpans spans;
  const size_t length = formatRecordedLineText(p, n, text, &fieldsFrom, cut, &spans);
  if (length == 0) return false;
  const std::string_view line(text, length);
  if (encoder.format == LineFormat::kText) {
    out->append(line);
    return true;
  }
  LogRecord record;
  if (!parseLine(line, zone, &record)) {
    // A head not in muon's layout (only crafted bytes): the line as a message.
    appendUnparsedLine(encoder, line, out);
    return true;
  }
  // The fields are the tail of the message from where the replay wrote them.
  const size_t messageBegin = static_cast<size_t>(record.message.data() - text);
  const size_t messageEnd = messageBegin + record.message.size();
  const size_t from = std::clamp(fieldsFrom, messageBegin, messageEnd);
  record.fields = std::string_view(text + from, messageEnd - from);
  LogField fields[FieldSpans::kMax];
  record.fieldList = fields;
  record.fieldCount = fieldsOf(text, spans, from, messageEnd, fields);
  appendEncoded(encoder, record, out);
  return true;
}

}  // namespace detail
}  // namespace muon
