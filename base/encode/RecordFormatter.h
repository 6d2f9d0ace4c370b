// RecordFormatter: records (RecordQueue.h) back into the text lines their
// statements would have written, byte for byte: the same prefix, level
// name, operands through the same LogStream, and trailer as a statement
// that formats its own line (Logging.cc). The time is the one the statement
// read; the zone and the control-character policy are the ones in force
// when the record is formatted. Or into the lines of another format
// (LineFormat.h): the record (LogRecord.h) the replay made, its fields
// where the replay wrote them, through that format's encoder
// (LineEncoders.h).
//
// Used by the thread that consumes the queues (AsyncLogging's backend); one
// formatter per such thread: not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/internal/LogSite.h"
#include "muon/base/internal/OperandReplay.h"
#include "muon/base/internal/RecordQueue.h"
#include "muon/base/TscClock.h"

namespace muon {
namespace detail {

// A recorded line: a statement's line with its operands recorded and the
// rest as text, what a crash-safe AsyncLogging keeps in its spool, so that a
// later process decodes it without the sites or clock of the one that wrote
// it (LogSpool.h):
//
//   [head length: 1 byte][trailer length: 1 byte][head][operands][trailer]
//
// The head is the line's start as a text statement writes it (date-time,
// thread, level); the operands are LogOperands.h's; the trailer is the
// site's " - file.cc:42\n".
inline constexpr size_t kRecordedLineHeader = 2;
inline constexpr size_t kMaxRecordedHead = 64;
// Writes the two length bytes of a recorded line at p.
inline void writeRecordedLineHeader(char* p, size_t head, size_t trailer) {
  p[0] = static_cast<char>(head);
  p[1] = static_cast<char>(trailer);
}
// Writes the line of the recorded line in [p, p+n) into `out` (room for
// RecordFormatter::kMaxLine bytes) and returns its length, the line ending
// in its trailer's '\n'; 0 if the bytes are not a recorded line (lengths
// that do not add up, a trailer without its '\n', operands that do not
// decode). Safe for any bytes. *cut (if given) says whether its message
// was cut (LogStream.h), for the caller that writes it to count
// (countTruncatedLine). Any thread.
size_t formatRecordedLine(const char* p, size_t n, char* out, bool* cut = nullptr);
// The line of the recorded line in [p, p+n) in `encoder`'s format, and
// '\n', appended to `out`, its head's date-time read in `zone`; false,
// with nothing appended, where formatRecordedLine returns 0. *cut as there.
// Any thread.
bool appendRecordedLineAs(const LineEncoder& encoder, const char* p, size_t n,
                          const TimeZone& zone, std::string* out, bool* cut = nullptr);

// Whoever takes the parts of each record a RecordFormatter formats, beside
// its line (AsyncLogging's forwards): take() is called once a record, on
// the formatter's thread, with views valid for the call only.
class LineTap {
 public:
  virtual void take(const LogRecord& record) = 0;

 protected:
  ~LineTap() = default;
};

// A line written as text (a line appended whole, a recorded line's line,
// the drop report), or each line of `chunk`, to `tap`: its parts read back
// (readTextLine), or a record of only its message where they do not read;
// `text` the line. Any thread.
void tapLine(std::string_view line, const TimeZone& zone, LineTap* tap);
void tapLines(std::string_view chunk, const TimeZone& zone, LineTap* tap);

class RecordFormatter {
 public:
  // The longest text line format() writes: a statement's, or a line
  // queued whole (a kText record, such as a JSON line a statement made).
  static constexpr size_t kMaxLine = std::max(LogStream::kBufferSize, RecordQueue::kMaxText);
  // The longest line of any format (an encoder's capacity for a text
  // line's parts).
  static constexpr size_t kMaxEncodedLine = 10 * kMaxLine + kJsonObjectOverhead;

  explicit RecordFormatter(LineFormat format = LineFormat::kText)
      : encoder_(encoderFor(format)) {}

  // The longest line format() writes in this format.
  size_t maxLine() const {
    return encoder_.format == LineFormat::kText ? kMaxLine : kMaxEncodedLine;
  }
  // Writes the line of `record` into `out` (room for maxLine() bytes) and
  // returns its length. `prefix` is the cache of the record's thread
  // (`tid`, whose text is `tidText`, "%5d "), whose records come to it in order.
  // A `tap` takes the record's parts too.
  // Inlined where it is called: the backend's loop then keeps the
  // registers a line's formatting needs across its records, not per call.
  __attribute__((always_inline)) inline size_t format(const RecordHeader& record,
                                                      LinePrefix& prefix, int tid,
                                                      std::string_view tidText, char* out,
                                                      LineTap* tap = nullptr);

 private:
  // The text line into `out` (kMaxLine bytes); its fields begin at
  // *fieldsFrom (the message's end if none), their spans kept in *spans if
  // given. Inlined into format(): its call would cost a short line a tenth
  // of its instructions.
  __attribute__((always_inline)) inline size_t formatText(const RecordHeader& record,
                                                         LinePrefix& prefix, std::string_view tid,
                                                         char* out, size_t* fieldsFrom,
                                                         FieldSpans* spans);

  // format() for every line but a text line with no tap.
  __attribute__((noinline)) size_t formatOther(const RecordHeader& record, LinePrefix& prefix,
                                               int tid, std::string_view tidText, char* out,
                                               LineTap* tap);
  // The statement's time: its second and microsecond. Inlined into
  // formatText(), as that is.
  __attribute__((always_inline)) inline void timeOf(const RecordHeader& record, int64_t* second,
                                                    int* micro);
  // The parts of `record`, whose text line formatText() made at `text`
  // (n bytes, its fields from fieldsFrom, their spans in spans_).
  LogRecord partsOf(const RecordHeader& record, const LinePrefix& prefix, int tid,
                    const char* text, size_t n, size_t fieldsFrom);
  // A line queued whole (a kText record) to `tap`, read back.
  void tapWholeLine(const char* line, size_t n, LineTap* tap);

  const LineEncoder& encoder_;
  // Of the last line formatText() made: its microsecond, its header's length.
  int micro_ = 0;
  size_t header_ = 0;
  // The window on the second of the last counter reading converted.
  TscClock::SecondWindow window_;
  // Another format: the text line the record's parts are views into, and
  // its fields.
  char text_[kMaxLine];
  FieldSpans spans_;
  LogField fields_[FieldSpans::kMax];
};

inline void RecordFormatter::timeOf(const RecordHeader& record, int64_t* second, int* micro) {
  if (record.kind == RecordHeader::kStatementCount) {
    const uint64_t count = record.key;  // the statement's counter, its time too
    if (!window_.covers(count)) {
      const Timestamp t = TscClock::atCount(count, &window_);
      *second = t.secondsSinceEpoch();
      *micro = t.microSecondsInSecond();
    } else {
      *second = window_.second;
      *micro = window_.microAt(count);
    }
  } else {
    const Timestamp t(record.time);
    *second = t.secondsSinceEpoch();
    *micro = t.microSecondsInSecond();
  }
}

inline size_t RecordFormatter::format(const RecordHeader& record, LinePrefix& prefix, int tid,
                                      std::string_view tidText, char* out, LineTap* tap) {
  // The common line, a text line with no tap, inline; every other out of
  // line, so that it costs the common one no registers.
  if (__builtin_expect(encoder_.format == LineFormat::kText && tap == nullptr, 1)) {
    size_t fieldsFrom;
    return formatText(record, prefix, tidText, out, &fieldsFrom, nullptr);
  }
  return formatOther(record, prefix, tid, tidText, out, tap);
}

inline size_t RecordFormatter::formatText(const RecordHeader& record, LinePrefix& prefix,
                                          std::string_view tid, char* out, size_t* fieldsFrom,
                                          FieldSpans* spans) {
  const char* body = reinterpret_cast<const char*>(&record + 1);
  if (record.kind == RecordHeader::kText) {
    std::memcpy(out, body, record.length);  // <= RecordQueue::kMaxText
    return record.length;
  }
  int64_t second;
  int micro;
  timeOf(record, &second, &micro);
  prefix.update(second, timeZoneGeneration(), tid);
  micro_ = micro;
  const int level = record.level < kLevelCount ? record.level : kLevelCount - 1;

  // The line is made in place, in `out`.
  LogStream stream;
  LogStream::Buffer& buf = stream.buffer();
  buf.redirect(out);
  header_ = writeHeader(buf, prefix, micro, level);
  stream.keepFieldSpans(spans);
  replayOperandsInline(body, record.length, stream);
  stream.closeFields();
  if (appendTrailer(stream, record.site->where)) countTruncatedLine();
  *fieldsFrom = stream.trailingFieldsFrom(buf.length() - record.site->where.length);
  return buf.length();
}

}  // namespace detail
}  // namespace muon
