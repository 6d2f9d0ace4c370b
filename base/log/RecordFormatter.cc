#include "muon/base/internal/RecordFormatter.h"

#include <algorithm>
#include <cstring>

#include "muon/base/internal/LogSite.h"
#include "muon/base/Logging.h"
#include "muon/base/internal/OperandReplay.h"

namespace muon {
namespace detail {

namespace {

// The message of a TRACE or DEBUG line starts with the function's name
// and a space (Logger's constructor writes them first); it goes apart.
void splitFunction(JsonLineParts* parts) {
  if (parts->level > Logger::DEBUG) return;
  const size_t space = parts->message.find(' ');
  if (space == std::string_view::npos) return;
  parts->function = parts->message.substr(0, space);
  parts->message.remove_prefix(space + 1);
}

}  // namespace

size_t RecordFormatter::format(const RecordHeader& record, LinePrefix& prefix, int tid,
                               std::string_view tidText, char* out) {
  if (format_ == LineFormat::kText || record.kind == RecordHeader::kText) {
    size_t fieldsFrom;
    return formatText(record, prefix, tidText, out, &fieldsFrom);
  }
  size_t fieldsFrom;
  const size_t n = formatText(record, prefix, tidText, text_, &fieldsFrom);
  const SourceLocation& where = record.site->where;
  const size_t messageBegin = header_;
  const size_t messageEnd = n - where.length;
  JsonLineParts parts;
  parts.second = prefix.second;
  parts.micro = micro_;
  parts.level = record.level < kLevelCount ? record.level : kLevelCount - 1;
  parts.tid = tid;
  parts.message = std::string_view(text_ + messageBegin, fieldsFrom - messageBegin);
  parts.fields = std::string_view(text_ + fieldsFrom, messageEnd - fieldsFrom);
  splitFunction(&parts);
  parts.file = std::string_view(text_ + messageEnd + SourceLocation::kFileOffset, where.fileLength);
  parts.line = where.line;
  return writeJsonObject(parts, out);
}

size_t RecordFormatter::formatText(const RecordHeader& record, LinePrefix& prefix,
                                   std::string_view tid, char* out, size_t* fieldsFrom) {
  const char* body = reinterpret_cast<const char*>(&record + 1);
  if (record.kind == RecordHeader::kText) {
    std::memcpy(out, body, record.length);  // <= RecordQueue::kMaxText
    return record.length;
  }
  int64_t second;
  int micro;
  if (record.kind == RecordHeader::kStatementCount) {
    const uint64_t count = record.key;  // the statement's counter, its time too
    if (!window_.covers(count)) {
      const Timestamp t = TscClock::atCount(count, &window_);
      second = t.secondsSinceEpoch();
      micro = t.microSecondsInSecond();
    } else {
      second = window_.second;
      micro = window_.microAt(count);
    }
  } else {
    const Timestamp t(record.time);
    second = t.secondsSinceEpoch();
    micro = t.microSecondsInSecond();
  }
  prefix.update(second, timeZoneGeneration(), tid);
  micro_ = micro;
  const int level = record.level < kLevelCount ? record.level : kLevelCount - 1;

  // The line is made in place, in `out`.
  LogStream stream;
  LogStream::Buffer& buf = stream.buffer();
  buf.redirect(out);
  header_ = writeHeader(buf, prefix, micro, level);
  replayOperandsInline(body, record.length, stream);
  stream.closeFields();
  if (appendTrailer(stream, record.site->where)) countTruncatedLine();
  *fieldsFrom = stream.trailingFieldsFrom(buf.length() - record.site->where.length);
  return buf.length();
}

namespace {

// formatRecordedLine, and where its fields begin (*fieldsFrom).
size_t formatRecordedLineText(const char* p, size_t n, char* out, size_t* fieldsFrom, bool* cut) {
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
  if (!replayOperands(operands, operandBytes, stream)) return 0;
  stream.closeFields();
  const bool wasCut = appendTrailerBytes(stream, operands + operandBytes, trailer);
  if (cut != nullptr) *cut = wasCut;
  *fieldsFrom = stream.trailingFieldsFrom(buf.length() - trailer);
  return buf.length();
}

}  // namespace

size_t formatRecordedLine(const char* p, size_t n, char* out, bool* cut) {
  size_t fieldsFrom;
  return formatRecordedLineText(p, n, out, &fieldsFrom, cut);
}

bool appendRecordedLineAsJson(const char* p, size_t n, const TimeZone& zone, std::string* out,
                              bool* cut) {
  char text[RecordFormatter::kMaxLine];
  size_t fieldsFrom;
  const size_t length = formatRecordedLineText(p, n, text, &fieldsFrom, cut);
  if (length == 0) return false;
  const std::string_view line(text, length);
  Timestamp time;
  LineParts parsed;
  if (!parseLine(line, zone, &time, &parsed)) {
    // A head not in muon's layout (only crafted bytes): the line as a message.
    appendJsonMessage(line, out);
    return true;
  }
  JsonLineParts parts = jsonPartsOf(parsed, time);
  // The fields are the tail of the message from where the replay wrote them.
  const size_t messageBegin = static_cast<size_t>(parsed.message.data() - text);
  const size_t keep = fieldsFrom > messageBegin ? fieldsFrom - messageBegin : 0;
  parts.message = parsed.message.substr(0, std::min(keep, parsed.message.size()));
  parts.fields = parsed.message.substr(parts.message.size());
  appendJsonObject(parts, out);
  return true;
}

}  // namespace detail
}  // namespace muon
