// LineEncoders: the line's parts (LogRecord.h, the one line model) into a
// line of one format, one encoder per format (LineFormat.h):
//
//   kText    the record's text, as its maker wrote it (the replay of the
//            statement's operands, LineLayout.h's layout)
//   kJson    JsonLines.h's object (JsonEncoder.cc)
//   kLogfmt  LineFormat.h's logfmt line (LogfmtEncoder.cc)
//
// RFC 5424 is the fourth, with the settings of a syslog output
// (SyslogFormat.h). An output takes its encoder once, when it is made
// (encoderFor), and nothing else asks which format a line is in.
//
// The encoders take the record's fields from its fieldList where its maker
// knew them, else from its `fields` text (readFields): never from the
// message. Pure functions: any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "muon/base/JsonLines.h"
#include "muon/base/LineFormat.h"
#include "muon/base/LogRecord.h"

namespace muon {
namespace detail {

struct SourceLocation;

struct LineEncoder {
  LineFormat format;
  // The most bytes encode() writes for `record`.
  size_t (*capacity)(const LogRecord& record);
  // Writes the line of `record`, '\n' included, at `out` (room for
  // capacity(record) bytes); returns its length.
  size_t (*encode)(const LogRecord& record, char* out);
};

const LineEncoder& encoderFor(LineFormat format);

// The line of `record` in `encoder`'s format appended to `out`.
void appendEncoded(const LineEncoder& encoder, const LogRecord& record, std::string* out);

// A line an output of `encoder`'s format is given as text (a text line
// appended directly, the "Dropped log messages" report, a file's lines for
// muon-logcat), with or without its '\n', appended to `out` with '\n': a
// line already in that format as it is (for JSON an object, for logfmt a
// line starting "time="); a JSON line muon wrote, for another format, read
// back (readJsonLine) and encoded; a text line in muon's layout taken
// apart (parseLine) and encoded, its message whole, or with kRead without
// the logfmt words at its end, which become its fields; any other line
// whole as its message alone (appendUnparsedLine).
void appendTextLine(const LineEncoder& encoder, std::string_view line, const TimeZone& zone,
                    FieldsInText fields, std::string* out);
// What readTextLine found in a line.
enum class TextLineKind {
  kParts,    // a line in muon's layout, text or JSON: *record holds its parts
  kMessage,  // a JSON line of only a message ({"message":"..."}): record->message
  kOther,    // any other line: nothing read
};
// The parts of a line given as text, as appendTextLine reads them: a JSON
// line muon wrote read back (readJsonLine; its views into *storage), a text
// line in muon's layout taken apart (parseLine; views into `line`), with
// `fields` as there.
TextLineKind readTextLine(std::string_view line, const TimeZone& zone, FieldsInText fields,
                          std::string* storage, LogRecord* record);
// The same for each line of `chunk` (a last piece without '\n' too).
void appendTextLines(const LineEncoder& encoder, std::string_view chunk, const TimeZone& zone,
                     FieldsInText fields, std::string* out);
// Whether `line` is in `encoder`'s format already (as above); and whether
// every line of `chunk` is, which for text is always so.
bool isEncodedLine(const LineEncoder& encoder, std::string_view line);
bool allEncodedLines(const LineEncoder& encoder, std::string_view chunk);
// Lines given to an output directly (a LogFile, a StdoutSink, an
// AsyncLogging) that are not all in its format (allEncodedLines): each
// line of `chunk` in `encoder`'s format, as appendTextLines makes it with
// the logger's time zone and no fields read from text, into *scratch
// (emptied first), which the result views.
std::string_view encodeGivenLines(const LineEncoder& encoder, std::string_view chunk,
                                  std::string* scratch);
// `line` (without its '\n') as a line of only a message, and '\n':
// {"message":"<line>"}, msg=<line>, or the line itself.
void appendUnparsedLine(const LineEncoder& encoder, std::string_view line, std::string* out);

// What the encoders write of a record's message and fields: the message
// without its fields, and the fields one by one, in order. A piece of the
// `fields` text that does not read as fields (a value cut by the line's
// end) stays with the message: `kept`, written after `message`.
struct MessageAndFields {
  std::string_view message;
  std::string_view kept;
};
// Calls onField(const LogField&) for each field of `record` and returns
// its message, as above.
template <typename OnField>
MessageAndFields readFields(const LogRecord& record, OnField onField);
// The order the encoders write them in: onMessage(const MessageAndFields&)
// once, then onField(const LogField&) for each field.
template <typename OnMessage, typename OnField>
void messageThenFields(const LogRecord& record, OnMessage onMessage, OnField onField);

// The encoders' own pieces, shared with the readers and the RFC 5424
// builder.
//   "2026-11-21T08:15:02." of the second `second` in UTC at p, from a
//   per-thread cache; returns 20.
size_t writeUtcSecond(char* p, int64_t second);

// ---- the JSON encoder (JsonEncoder.cc) ---------------------------------------

inline constexpr size_t kJsonObjectOverhead = 256;
// The most bytes encodeJson writes: kJsonObjectOverhead, 6 per byte of
// text and 10 per byte of fields.
size_t jsonCapacity(const LogRecord& record);
size_t encodeJson(const LogRecord& record, char* out);

// A deferred record as its operands (LogOperands.h) and what the backend
// knows besides them: the JSON encoder's other input.
struct OperandLine {
  int64_t second;  // the statement's time: seconds since the epoch and microsecond
  int micro;
  int level;  // a Logger::LogLevel
  int tid;
  // tid's text as a text line shows it ("%5d ", CurrentThread::tidString),
  // whose digits are copied; empty: tid is converted.
  std::string_view tidText;
  const SourceLocation* where;
  const char* operands;
  size_t length;
};
// The most operand bytes encodeJsonOfOperands takes: their text line then
// has room to spare (a byte of an operand is at most four in the line), so
// that nothing of it is cut.
inline constexpr size_t kMaxOperandsOfJson = 800;
// The most bytes encodeJsonOfOperands writes: a byte of the operands is at
// most four of the message (JSON writes such a message as it is) or eight
// of a field (a name's header and key, a number's text), and the file's
// name at most six a byte.
inline constexpr size_t kMaxJsonOfOperands = kJsonObjectOverhead + 8 * kMaxOperandsOfJson + 6 * 96;
// Writes the JSON line of `line` at `out` (room for kMaxJsonOfOperands
// bytes), byte for byte encodeJson's of the record its text line makes, without
// making the text line; returns its length, or 0, with `out` scribbled,
// where it does not promise those bytes: a TRACE or DEBUG statement (the
// function leads the message), more operand bytes than kMaxOperandsOfJson,
// a message or field value with a byte JSON or logfmt escapes, a field
// other than a kFieldOne start and its one value, a message operand after
// a field, a name the text line would change, a float that is inf or nan.
// The caller then makes the text line and encodes its record.
size_t encodeJsonOfOperands(const OperandLine& line, char* out);

// ---- the logfmt encoder (LogfmtEncoder.cc) -----------------------------------

// The keys a line's own parts take in a logfmt line; a field so named is
// written "fields.<name>", never in their place.
bool isReservedLogfmtKey(std::string_view name);
size_t logfmtCapacity(const LogRecord& record);
size_t encodeLogfmt(const LogRecord& record, char* out);

// ---- readFields ----------------------------------------------------------------

template <typename OnField>
MessageAndFields readFields(const LogRecord& record, OnField onField) {
  const std::string_view run = record.fields;
  MessageAndFields out;
  out.message = record.message.substr(0, record.message.size() - run.size());
  if (record.fieldCount > 0 || run.empty()) {
    for (size_t i = 0; i < record.fieldCount; ++i) onField(record.fieldList[i]);
    return out;
  }
  // The run as a stream writes it (" a=1 b=\"x y\""), read in one pass;
  // one that does not read whole is read as a message's end is.
  size_t i = 0;
  const size_t n = run.size();
  bool whole = true;
  while (i < n && whole) {
    whole = false;
    if (run[i] != ' ') break;
    LogField f;
    const size_t len = logfmtTokenAt(run, i + 1, &f);
    if (len == 0) break;
    i += 1 + len;
    whole = true;
  }
  if (whole) {
    for (size_t j = 0; j < n;) {
      LogField f;
      j += 1 + logfmtTokenAt(run, j + 1, &f);
      onField(f);
    }
    return out;
  }
  const size_t begin = readLogfmtFields(run, [&](const LogField& f) { onField(f); });
  out.kept = run.substr(0, begin < n && begin > 0 && run[begin - 1] == ' ' ? begin - 1 : begin);
  return out;
}

template <typename OnMessage, typename OnField>
void messageThenFields(const LogRecord& record, OnMessage onMessage, OnField onField) {
  if (record.fieldCount > 0 || record.fields.empty()) {
    // The fields known: the message is the rest.
    MessageAndFields m;
    m.message = record.message.substr(0, record.message.size() - record.fields.size());
    onMessage(m);
    for (size_t i = 0; i < record.fieldCount; ++i) onField(record.fieldList[i]);
    return;
  }
  // Read from the text, which also says what the message keeps.
  thread_local std::vector<LogField> fields;  // kept: no allocation per line
  fields.clear();
  onMessage(readFields(record, [](const LogField& f) { fields.push_back(f); }));
  for (const LogField& f : fields) onField(f);
}

}  // namespace detail
}  // namespace muon
