// LogStream: the `<<` formatter behind LOG_INFO and friends.
//
// A LogStream writes into a fixed buffer that lives inside it (no heap, and
// the buffer is never cleared with memset: only the written prefix is read).
// It never overflows. The line's start and its message (every operand that
// is not a field) take at most its first kMessageEnd bytes; the last
// kFieldRoom bytes are kept for what ends a line: its fields (muon::kv,
// LogContext's), the cut marker and the trailer, so that a long message
// never costs the line its fields. A string that does not fit before
// kMessageEnd is cut there; a number (integer, floating point, pointer, Fmt)
// is written whole or not at all, because a cut number reads as a different
// value ("fd=12" for fd=1234). Either way the message ends there: nothing
// after it is written but fields, and the line, once finished
// (finishLine), carries kCutMarker before its trailer.
//
// Control characters in string operands (const char*, std::string,
// std::string_view) are escaped by default: '\n' as \n, '\r' as \r, any
// other byte below 0x20 but tab, and DEL, as \xHH. So a message cannot forge
// a second log line (CWE-117) or send escape sequences to the terminal of
// whoever reads the log; a string without control characters is written
// byte for byte. setControlCharacters(kRaw) keeps them raw (muduo's
// behaviour; one setting for the process). Single chars, numbers and Fmt are
// never changed.
// Not thread-safe; each log statement has its own LogStream.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "muon/base/internal/LogOperands.h"
#include "muon/base/Logfmt.h"

namespace muon {
namespace detail {

// "00" "01" ... "99": two decimal digits per look-up.
inline constexpr char kDigitPairs[201] =
    "00010203040506070809"
    "10111213141516171819"
    "20212223242526272829"
    "30313233343536373839"
    "40414243444546474849"
    "50515253545556575859"
    "60616263646566676869"
    "70717273747576777879"
    "80818283848586878889"
    "90919293949596979899";
// Writes 0 <= v < 100 as two digits at p.
inline void writeTwoDigits(char* p, unsigned v) { std::memcpy(p, kDigitPairs + 2 * v, 2); }

// Converts v to decimal at buf, returns the number of chars (no '\0').
// buf must have room for 20 chars (21 for a negative value).
size_t convertDecimal(char* buf, long long v);
size_t convertDecimal(char* buf, unsigned long long v);
// A double of a few digits, 1e-3 <= |v| < 1e15, in fixed notation, exactly
// as std::to_chars(buf, end, v) writes it (the shortest text that reads
// back as v), without its general algorithm; returns 0, writing nothing
// for certain, for any other value. buf needs 24 chars.
size_t convertShortDouble(char* buf, double v);
// "0x" + lowercase hex digits; buf needs 18 chars.
size_t convertHex(char* buf, unsigned long long v);
// The shortest text that reads back as v ("0.1", "1e+300", "nan"), as a
// LogStream writes a float or a double; buf needs kMaxFloatingSize chars
// (the longest is 24: "-2.2250738585072014e-308").
inline constexpr size_t kMaxFloatingSize = 32;
size_t convertFloat(char* buf, float v);
size_t convertDouble(char* buf, double v);

// Whether [p, p+n) may hold a byte to escape: one below 0x20 or DEL (a tab
// answers yes too; the escaper leaves it). Sixteen bytes at a time, the last
// block overlapping the one before, so a string of 16 to 32 bytes costs two
// compares and one of 8 to 15 one (GCC's vector extension: SSE2 on x86,
// NEON on ARM).
__attribute__((always_inline)) inline bool mayHoldControl(const char* p, size_t n) {
  typedef unsigned char Bytes __attribute__((vector_size(16)));
  auto holds = [](Bytes x) {
    Bytes m = (x < 0x20) | (x == 0x7f);
    uint64_t half[2];
    std::memcpy(half, &m, sizeof half);
    return (half[0] | half[1]) != 0;
  };
  auto hits = [&holds](const char* at) {
    Bytes x;
    std::memcpy(&x, at, sizeof x);
    return holds(x);
  };
  if (n >= 16) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      if (hits(p + i)) return true;
    }
    return i < n && hits(p + n - 16);
  }
  if (n >= 8) {  // two overlapping 8-byte words, side by side in one block
    Bytes x;
    std::memcpy(&x, p, 8);
    std::memcpy(reinterpret_cast<char*>(&x) + 8, p + n - 8, 8);
    return holds(x);
  }
  // Shorter: two overlapping half words in one 8-byte word, tested as
  // eight bytes at once, then byte by byte.
  auto wordHits = [](uint64_t x) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHigh = 0x8080808080808080ull;
    uint64_t below = (x - kOnes * 0x20) & ~x & kHigh;  // some byte < 0x20
    uint64_t del = x ^ (kOnes * 0x7f);
    return (below | ((del - kOnes) & ~del & kHigh)) != 0;  // or == 0x7f
  };
  if (n >= 4) {  // two overlapping 4-byte words, in one 8-byte word
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    return wordHits(uint64_t{a} | uint64_t{b} << 32);
  }
  for (size_t i = 0; i < n; ++i) {
    if (isControlByte(static_cast<unsigned char>(p[i]))) return true;
  }
  return false;
}

// Copies sizeof(Word) <= len <= 2 * sizeof(Word) bytes as two overlapping
// moves of a Word: the first and the last sizeof(Word) bytes.
template <typename Word>
inline void copyBothEnds(char* to, const char* from, size_t len) {
  Word a, b;
  std::memcpy(&a, from, sizeof a);
  std::memcpy(&b, from + len - sizeof b, sizeof b);
  std::memcpy(to, &a, sizeof a);
  std::memcpy(to + len - sizeof b, &b, sizeof b);
}

// Copies len <= 32 bytes: two overlapping moves of 16, of 8 or of 4, or
// bytes.
inline void copyShort(char* to, const char* from, size_t len) {
  typedef char Block __attribute__((vector_size(16)));
  if (len >= 16) {
    copyBothEnds<Block>(to, from, len);
  } else if (len >= 8) {
    copyBothEnds<uint64_t>(to, from, len);
  } else if (len >= 4) {
    copyBothEnds<uint32_t>(to, from, len);
  } else {
    for (size_t i = 0; i < len; ++i) to[i] = from[i];
  }
}

// Copies len bytes: a literal's (len a constant once inlined) by the
// compiler's moves, a short run whose length is known only at run time (a
// replayed operand) in two overlapping moves rather than by a call.
__attribute__((always_inline)) inline void copyBytes(char* to, const char* from, size_t len) {
  if (!__builtin_constant_p(len) && len <= 32) {
    copyShort(to, from, len);
  } else {
    std::memcpy(to, from, len);
  }
}

// memcpy, out of line (LogStream.cc).
void copyLongBytes(char* to, const char* from, size_t len);
// A string operand's bytes into its record: `from` may be null where len
// is 0 (std::string_view()). A short run in moves; a long one by the call,
// where the caller's view of a small source array, whose length the
// compiler cannot bound, would otherwise draw a false -Wstringop-overread.
__attribute__((always_inline)) inline void copyOperandBytes(char* to, const char* from,
                                                            size_t len) {
  if (len <= 32) {
    copyShort(to, from, len);
  } else {
    copyLongBytes(to, from, len);
  }
}

// A fixed-size character buffer. SIZE counts bytes of text; no terminator is
// kept. It writes into its own SIZE bytes, or into SIZE bytes lent to it
// (redirect), which a recording LogStream uses to write a record in
// place in its queue. Its last KEEP bytes are kept back: avail() and
// append() stop before them, and only an owner that asks (room(), pin())
// writes there (LogStream keeps them for what ends a line).
template <size_t SIZE, size_t KEEP = 0>
class FixedBuffer {
  static_assert(KEEP < SIZE, "");

 public:
  FixedBuffer() : begin_(data_), cur_(data_), end_(data_ + SIZE - KEEP) {}
  FixedBuffer(const FixedBuffer&) = delete;
  FixedBuffer& operator=(const FixedBuffer&) = delete;

  // Appends as much of [buf, buf+len) as fits; returns how many bytes were taken.
  size_t append(const char* buf, size_t len) {
    if (__builtin_expect(len <= avail(), 1)) {
      copyBytes(cur_, buf, len);
      cur_ += len;
      return len;
    }
    size_t n = avail();
    std::memcpy(cur_, buf, n);
    cur_ += n;
    return n;
  }

  const char* data() const { return begin_; }
  size_t length() const { return static_cast<size_t>(cur_ - begin_); }
  static constexpr size_t capacity() { return SIZE; }

  char* current() { return cur_; }
  // The bytes append() may still write.
  size_t avail() const { return static_cast<size_t>(end_ - cur_); }
  // The bytes left up to the very end, the kept ones included.
  size_t room() const { return SIZE - length(); }
  // Moves the end by len bytes written at current() (len <= room()).
  // Past avail(), pin() must follow.
  void add(size_t len) { cur_ += len; }
  // Drops the last len bytes (len <= length()).
  void unwind(size_t len) { cur_ -= len; }
  // avail() is 0 from now on, until the next write past it: the owner
  // writes by room() alone.
  void pin() { end_ = cur_; }
  void reset() {
    cur_ = begin_;
    end_ = begin_ + SIZE - KEEP;
  }

  // Writes into the SIZE bytes at `begin` from now on, empty.
  void redirect(char* begin) {
    begin_ = cur_ = begin;
    end_ = begin + SIZE - KEEP;
  }
  // Back to its own bytes, empty.
  void useOwnStorage() { redirect(data_); }
  // Back to its own bytes, with what it holds copied there (no more than
  // SIZE - KEEP).
  void moveToOwnStorage() {
    const size_t n = length();
    if (begin_ != data_) std::memmove(data_, begin_, n);
    begin_ = data_;
    cur_ = data_ + n;
    end_ = data_ + SIZE - KEEP;
  }

  std::string toString() const { return std::string(begin_, length()); }
  std::string_view toStringView() const { return std::string_view(begin_, length()); }

 private:
  char* begin_;
  char* cur_;
  char* end_;  // where append() stops: SIZE - KEEP bytes in, or cur_ once pinned
  char data_[SIZE];
};

// Where the outermost fields of a text line lie in its buffer, as the
// stream wrote them: for the encoders that take a line's fields apart (JSON,
// logfmt, RFC 5424; Encoders.h), so that they never read the fields back out
// of the text. A stream given one (LogStream::keepFieldSpans) keeps the
// last run of fields written one after another (the run
// trailingFieldsFrom() gives), a span each: the ' ' before its name, its
// '=', its value's end. `complete` is false where the spans do not describe
// the run whole (more than kMax fields, a line cut at its end): a reader
// then takes the run's text apart instead.
struct FieldSpans {
  static constexpr size_t kMax = 32;
  struct Span {
    uint16_t begin;
    uint16_t equals;
    uint16_t end;
  };
  uint32_t count = 0;
  bool complete = true;
  uint16_t open = 0;  // where the field being written began
  Span at[kMax];

  void restart() {
    count = 0;
    complete = true;
  }
  void add(uint16_t equals, uint16_t end) {
    if (count == kMax) {
      complete = false;
      return;
    }
    at[count++] = Span{open, equals, end};
  }
};

}  // namespace detail

// printf-style formatting of a short piece: LOG_INFO << Fmt("%.3f", x);
// The compiler checks the arguments against the format (-Wformat). The result
// holds at most kMaxLength chars; longer output is cut there.
class Fmt {
 public:
  static constexpr size_t kMaxLength = 47;
  explicit Fmt(const char* fmt, ...) __attribute__((format(printf, 2, 3)));

  const char* data() const { return buf_; }
  size_t length() const { return length_; }

 private:
  char buf_[48];
  size_t length_;
};

class LogStream {
 public:
  // A line's bytes, '\n' included: under PIPE_BUF, so that one write(2)
  // of a line is never interleaved with another writer's.
  static constexpr size_t kBufferSize = 4000;
  // What the message leaves for the fields, the cut marker and the trailer.
  static constexpr size_t kFieldRoom = 1000;
  static constexpr size_t kMessageEnd = kBufferSize - kFieldRoom;
  // What a line keeps free after its fields for its trailer (LineLayout.h's
  // SourceLocation::kCapacity).
  static constexpr size_t kLineEndRoom = 96;
  // What a cut line carries after its fields, before its trailer: a field,
  // so that readers of fields (JSON lines, syslog's structured data,
  // muon-logcat --json) see it as "log.truncated": true.
  static constexpr std::string_view kCutMarker = " log.truncated=true";
  using Buffer = detail::FixedBuffer<kBufferSize, kFieldRoom>;

  LogStream() : fieldText_(false), fieldDropped_(false) {}
  LogStream(const LogStream&) = delete;
  LogStream& operator=(const LogStream&) = delete;

  LogStream& operator<<(bool v) { return *this << (v ? '1' : '0'); }
  LogStream& operator<<(char v) {
    if (recording_ && record(detail::kOperandChar, v)) return *this;
    put(&v, 1);
    return *this;
  }
  // int8_t and uint8_t are numbers here, not characters.
  LogStream& operator<<(signed char v) { return *this << static_cast<int>(v); }
  LogStream& operator<<(unsigned char v) { return *this << static_cast<unsigned>(v); }
  LogStream& operator<<(short v) { return *this << static_cast<int>(v); }
  LogStream& operator<<(unsigned short v) { return *this << static_cast<unsigned>(v); }
  LogStream& operator<<(int v) {
    if (recording_ && record(detail::kOperandI32, v)) return *this;
    return formatInteger(static_cast<long long>(v));
  }
  LogStream& operator<<(unsigned int v) {
    if (recording_ && record(detail::kOperandU32, v)) return *this;
    return formatInteger(static_cast<unsigned long long>(v));
  }
  LogStream& operator<<(long v) { return *this << static_cast<long long>(v); }
  LogStream& operator<<(unsigned long v) { return *this << static_cast<unsigned long long>(v); }
  LogStream& operator<<(long long v) {
    if (recording_ && record(detail::kOperandI64, static_cast<int64_t>(v))) return *this;
    return formatInteger(v);
  }
  LogStream& operator<<(unsigned long long v) {
    if (recording_ && record(detail::kOperandU64, static_cast<uint64_t>(v))) return *this;
    return formatInteger(v);
  }

  // Shortest text that reads back as the same value ("0.1", "1e+300", "nan").
  LogStream& operator<<(float v) {
    if (recording_ && record(detail::kOperandF32, v)) return *this;
    return formatFloat(v);
  }
  LogStream& operator<<(double v) {
    if (recording_ && record(detail::kOperandF64, v)) return *this;
    return formatDouble(v);
  }

  // Extended precision is not kept: printed as the nearest double.
  LogStream& operator<<(long double v) { return *this << static_cast<double>(v); }

  // Pointers print as hex: 0x7ffd5c3a1b20 (nullptr: 0x0).
  LogStream& operator<<(const void* p) {
    if (recording_ && record(detail::kOperandPtr, reinterpret_cast<uint64_t>(p))) return *this;
    return formatPointer(p);
  }
  // So do function pointers (which would otherwise convert to bool and print 1).
  template <typename R, typename... Args>
  LogStream& operator<<(R (*f)(Args...)) {
    return *this << reinterpret_cast<const void*>(f);
  }
  // A bare nullptr reads as "no string", as a null const char* does.
  LogStream& operator<<(std::nullptr_t) { return append("(null)", 6); }

  // Inlined, so that a literal's length and its check are computed at
  // compile time.
  __attribute__((always_inline)) LogStream& operator<<(const char* s) {
    if (s) return appendText(s, std::strlen(s));
    return append("(null)", 6);
  }
  LogStream& operator<<(char* s) { return *this << static_cast<const char*>(s); }
  LogStream& operator<<(const std::string& s) { return appendText(s.data(), s.size()); }
  LogStream& operator<<(std::string_view s) { return appendText(s.data(), s.size()); }

  enum ControlCharacters { kEscape, kRaw };
  // For the whole process, from any thread; kEscape by default.
  static void setControlCharacters(ControlCharacters policy) {
    rawControl_.store(policy == kRaw, std::memory_order_relaxed);
  }
  static ControlCharacters controlCharacters() {
    return rawControl_.load(std::memory_order_relaxed) ? kRaw : kEscape;
  }
  LogStream& operator<<(const Fmt& f) {
    if (recording_ && recordBytes(detail::kOperandWhole, f.data(), f.length())) return *this;
    return appendWhole(f.data(), f.length());
  }

  // ---- key-value fields (LogFields.h: muon::kv streams these) ----
  // A field's start: " name=" in a text line, then its value's operands,
  // then endField(), which puts the value in its logfmt form (Logfmt.h).
  // `text`: the value comes from strings, not numbers or bools. Inside a
  // field, strings are taken raw and control characters are escaped by the
  // logfmt encoding instead (so the value reads back exactly). A field
  // inside a field's value is written as part of that value.
  // `cleanName`: the caller knows the name to be clean, 1 to kMaxFieldName
  // bytes that each may stay in a name (Logfmt.h), so it is copied as it is.
  void beginField(std::string_view name, bool text, bool cleanName = false) {
    beginFieldAs(text ? detail::kOperandFieldText : detail::kOperandFieldBare, name, text,
                 cleanName);
  }
  void endField() {
    if (recording_ && record(detail::kOperandFieldEnd, '\0')) return;
    endFieldText();
  }
  // A field whose value is the one operand streamed next (a number, a
  // bool, a string, Fmt): recorded as one record, the start, and no end;
  // after the value, endOneOperandField() ends it wherever it is text (a
  // text line, or a record that fell back to text on the way). `number`:
  // the value is a number or a bool, never quoted unless it is empty.
  void beginOneOperandField(std::string_view name, bool text, bool cleanName) {
    beginFieldAs(text ? detail::kOperandFieldOneText : detail::kOperandFieldOneBare, name, text,
                 cleanName);
  }
  void endOneOperandField(bool number) {
    if (recording_) return;
    if (fieldDepth_ == 1 && valueStaysAsItIs(number)) {
      fieldDepth_ = 0;
      noteFieldEnds(static_cast<uint16_t>(fieldStart_ - 1));
      return;
    }
    endFieldText();
  }
  // A whole field, " name=value" as beginField/endField write it (LogContext
  // makes it once), appended as it is where that gives the same bytes: in a
  // text line, outside any field, with room for it and the line's end to
  // spare. False, and nothing written, elsewhere: the caller then streams
  // the field.
  bool appendEncodedField(std::string_view encoded) {
    if (recording_ || fieldDepth_ != 0 || encoded.empty() ||
        buffer_.avail() < encoded.size() + kLineEndRoom + 2 + detail::kMaxFieldName) {
      return false;
    }
    const auto at = here();
    noteFieldBegins(at);
    buffer_.append(encoded.data(), encoded.size());
    // A name never holds '=' (Logfmt.h): the first one ends it.
    noteFieldEnds(static_cast<uint16_t>(at + encoded.find('=')));
    return true;
  }
  // The longest field appendEncodedField takes: far from a line's end.
  static constexpr size_t kMaxEncodedField = 1024;
  // Ends any field still open (bytes that lost their end).
  void closeFields() {
    while (fieldDepth_ > 0) endFieldText();
  }
  // Where the fields that end a text line's message begin, the message
  // ending at `messageEnd`: the ' ' before the first of the outermost
  // fields written one after another, with nothing else after them, up to
  // messageEnd (their logfmt text: " user=alice ms=12"; a line's end may
  // have cut the last). `messageEnd` if the message does not end in a
  // field (text follows the last one). Exact: it is where this stream wrote
  // them, not a reading of the text (a message "x user=bob" holds none).
  size_t trailingFieldsFrom(size_t messageEnd) const {
    return messageEnd <= fieldsEnd_ && fieldsFrom_ < messageEnd ? fieldsFrom_ : messageEnd;
  }
  // From now on (an empty stream, before its first field) the stream keeps
  // the spans of its fields in *spans (nullptr: none), which must outlive
  // the line. The spans describe trailingFieldsFrom()'s run when they are
  // complete.
  void keepFieldSpans(detail::FieldSpans* spans) {
    spans_ = spans;
    if (spans != nullptr) spans->restart();
  }

  // Raw bytes, never escaped (the Logger's own prefix and trailer).
  __attribute__((always_inline)) LogStream& append(const char* data, size_t len) {
    if (recording_ && recordBytes(detail::kOperandRaw, data, len)) return *this;
    put(data, len);
    return *this;
  }

  // Whether the message was cut (a text line): something after
  // kMessageEnd, or a field that did not fit in the line, was left out.
  bool truncated() const { return limit_ == Limit::kCut; }
  // Ends a text line whose fields are closed (closeFields) with the `n`
  // bytes of `trailer` (n <= kLineEndRoom), after kCutMarker if it was cut;
  // returns whether it was. For when the trailer does not fit before
  // avail()'s end, which is always so for a cut line (LineLayout.h's
  // appendTrailer).
  bool finishLine(const char* trailer, size_t n);

  // ---- recording (deferred formatting; LogOperands.h) ----
  // What a recording stream does when an operand no longer fits: the
  // Logger's hook, which turns the statement back into a text line.
  using TextFallback = void (*)(void* context, LogStream& stream);
  // From now on the stream records operands (LogOperands.h) into its
  // buffer, after what it holds (text the line starts with, such as its
  // header, or nothing). When one does not fit, the stream copies what it
  // recorded, takes it out of its buffer (which is then its own storage),
  // leaves recording mode, calls fallback(context, *this) if given, to write
  // the start of the line where there was none, and replays the recorded
  // operands and the one that did not fit as text: the line is then the one
  // a text statement makes, cut where it would be cut.
  void startRecording(TextFallback fallback, void* context) {
    recording_ = true;
    recordedFrom_ = here();
    fallback_ = fallback;
    fallbackContext_ = context;
  }
  bool recording() const { return recording_; }
  // Where the recorded operands begin in the buffer (while recording).
  size_t recordedFrom() const { return recordedFrom_; }
  // Leaves recording mode now, as if an operand had not fitted: the
  // operands recorded so far become text.
  void stopRecording() {
    if (recording_) fallBackToText();
  }

  friend struct detail::OperandReplay;  // replayOperands
  const Buffer& buffer() const { return buffer_; }
  Buffer& buffer() { return buffer_; }
  // Empty again, the message's room whole.
  void resetBuffer() {
    buffer_.reset();
    limit_ = Limit::kMessage;
  }

 private:
  // A recorded value: its tag and its bytes, if they fit (true); else the
  // stream leaves recording mode (false), and the caller writes the value
  // as text.
  template <typename T>
  bool record(detail::OperandTag tag, T v) {
    if (__builtin_expect(buffer_.avail() >= 1 + sizeof v, 1)) {
      char* p = buffer_.current();
      *p = static_cast<char>(tag);
      std::memcpy(p + 1, &v, sizeof v);
      buffer_.add(1 + sizeof v);
      return true;
    }
    fallBackToText();
    return false;
  }
  __attribute__((always_inline)) bool recordBytes(detail::OperandTag tag, const char* data,
                                                  size_t len) {
    if (__builtin_expect(buffer_.avail() >= detail::kOperandBytesHeader + len, 1)) {
      char* p = buffer_.current();
      const uint16_t n = static_cast<uint16_t>(len);  // len < kBufferSize
      p[0] = static_cast<char>(tag);
      std::memcpy(p + 1, &n, sizeof n);
      // data may be null where len is 0 (std::string_view()). Not
      // copyOperandBytes, as a statement's record has it: its moves, inlined
      // into every operator<< of the stream, would enlarge every replay into
      // a stream for this rare path's sake.
      if (len != 0) std::memcpy(p + detail::kOperandBytesHeader, data, len);
      buffer_.add(detail::kOperandBytesHeader + len);
      return true;
    }
    fallBackToText();
    return false;
  }
  // Leaves recording mode as startRecording() says. Out of line: rare.
  __attribute__((noinline, cold)) void fallBackToText();

  LogStream& formatFloat(float v);
  LogStream& formatDouble(double v);
  LogStream& formatPointer(const void* p);

  // Integers are written straight into the buffer when kMaxNumericSize bytes
  // are free (the common case), else through a small scratch, and then only
  // if the whole number fits.
  template <typename T>
  LogStream& formatInteger(T v) {
    if (__builtin_expect(buffer_.avail() >= kMaxNumericSize, 1)) {
      buffer_.add(detail::convertDecimal(buffer_.current(), v));
    } else {
      integerNearEnd(v);
    }
    return *this;
  }
  // Through a scratch, whole or not at all. Out of line: rare.
  __attribute__((noinline, cold)) void integerNearEnd(long long v);
  __attribute__((noinline, cold)) void integerNearEnd(unsigned long long v);
  // A string operand: checked, then copied, or escaped if it holds
  // something to escape. For a literal, data and len are constants once
  // this is inlined, and the check folds away at compile time.
  __attribute__((always_inline)) LogStream& appendText(const char* data, size_t len) {
    if (recording_ && recordBytes(detail::kOperandText, data, len)) return *this;
    // A field's value is taken raw (the logfmt encoding escapes it): not
    // scanned.
    if (fieldDepth_ == 0 && __builtin_expect(detail::mayHoldControl(data, len), 0) &&
        !rawControl_.load(std::memory_order_relaxed)) {
      appendEscaped(data, len);
    } else {
      put(data, len);
    }
    return *this;
  }
  // Text bytes into the buffer, as many as fit. The check is the buffer's
  // own: on the common path the taken count is `len` and the test folds.
  __attribute__((always_inline)) void put(const char* data, size_t len) {
    const size_t taken = buffer_.append(data, len);
    if (__builtin_expect(taken != len, 0)) putPastEnd(data + taken, len - taken, false);
  }
  // A write that does not fit before avail()'s end, of which what did
  // (nothing if `whole`) is written: in the message, the rest is left out,
  // and the message ends there; in a field's value, it goes on up to the
  // fields' end (fieldRoom), what does not fit cut (all of it if `whole`).
  // Out of line: rare.
  __attribute__((noinline, cold)) void putPastEnd(const char* data, size_t len, bool whole);
  // The message ends here, cut: avail() is 0 from now on.
  void cutHere() {
    limit_ = Limit::kCut;
    buffer_.pin();
  }
  // The bytes a field may still take: up to the end, less the room kept for
  // the cut marker and the trailer.
  size_t fieldRoom() const {
    const size_t room = buffer_.room();
    constexpr size_t kTail = kLineEndRoom + kCutMarker.size();
    return room > kTail ? room - kTail : 0;
  }
  // After a write past avail()'s end (a field's bytes in the kept room):
  // the buffer stays pinned, so that every later write comes through the
  // checks that know the room.
  void wrotePastEnd() {
    if (limit_ == Limit::kMessage) limit_ = Limit::kFields;
    buffer_.pin();
  }
  // Escapes, cut whole at the end. Out of line: rare.
  __attribute__((noinline, cold)) void appendEscaped(const char* data, size_t len);
  // A field's start recorded with `tag`, or written as text.
  __attribute__((always_inline)) void beginFieldAs(detail::OperandTag tag, std::string_view name,
                                                   bool text, bool cleanName) {
    if (recording_ &&
        recordBytes(tag, name.data(), std::min(name.size(), detail::kMaxFieldName))) {
      return;
    }
    beginFieldText(name, text, cleanName);
  }
  // A field in a text line (beginField/endField). A clean name (see
  // beginField) of an outermost field is copied inline; a literal's length
  // is then a constant and the copy a few moves.
  __attribute__((always_inline)) void beginFieldText(std::string_view name, bool text,
                                                     bool cleanName) {
    if (cleanName && fieldDepth_ == 0 &&
        __builtin_expect(buffer_.avail() >= 2 + detail::kMaxFieldName, 1)) {
      const auto at = here();
      noteFieldBegins(at);
      char* p = buffer_.current();
      p[0] = ' ';
      std::memcpy(p + 1, name.data(), name.size());
      p[1 + name.size()] = '=';
      buffer_.add(2 + name.size());
      fieldDepth_ = 1;
      fieldText_ = text;
      fieldStart_ = static_cast<uint16_t>(at + 2 + name.size());
      return;
    }
    beginFieldTextChecked(name, text);
  }
  void beginFieldTextChecked(std::string_view name, bool text);
  void endFieldText();
  // An outermost field begins at `at` (the buffer's length): it starts a
  // run of fields unless the last one ended there.
  uint16_t here() const { return static_cast<uint16_t>(buffer_.length()); }
  static_assert(kBufferSize < 65536, "offsets are two bytes");
  void noteFieldBegins(uint16_t at) {
    if (at != fieldsEnd_) {
      fieldsFrom_ = at;
      if (__builtin_expect(spans_ != nullptr, 0)) spans_->restart();
    }
    if (__builtin_expect(spans_ != nullptr, 0)) spans_->open = at;
  }
  // The outermost field begun last ends here, its '=' at `equals`.
  void noteFieldEnds(uint16_t equals) {
    fieldsEnd_ = here();
    if (__builtin_expect(spans_ != nullptr, 0)) spans_->add(equals, fieldsEnd_);
  }
  // Whether the open field's value is its own logfmt form (Logfmt.h): not
  // empty, and a number or a bool (`number`: their bytes never need quotes),
  // or bytes that need no quotes and not text that could read as a number.
  bool valueStaysAsItIs(bool number) const {
    const size_t len = buffer_.length() - fieldStart_;
    if (len == 0) return false;
    if (number) return true;
    const char* value = buffer_.data() + fieldStart_;
    return !detail::mayNeedQuotes(value, len) &&
           !(fieldText_ && detail::mayReadAsNumberOrBool(value[0]));
  }

  static std::atomic<bool> rawControl_;

  // All of [data, data+len) or nothing.
  LogStream& appendWhole(const char* data, size_t len) {
    if (__builtin_expect(len <= buffer_.avail(), 1)) {
      buffer_.append(data, len);
    } else {
      putPastEnd(data, len, true);
    }
    return *this;
  }

  static constexpr size_t kMaxNumericSize = 48;
  bool recording_ = false;
  // How far a text line's writes reach: the message's end (kMessageEnd);
  // past it, for a field that needed the kept room; or the message was cut
  // (truncated()). Past kMessage the buffer is pinned (avail() is 0), so
  // that every write takes the slow paths, which know the room.
  enum class Limit : uint8_t { kMessage, kFields, kCut };
  Limit limit_ = Limit::kMessage;
  // The open field of a text line: how deep (0: none), where its value
  // starts, whether it came from strings.
  uint8_t fieldDepth_ = 0;
  bool fieldText_ : 1;
  // The open outermost field was left out (no room for its name): its value
  // is left out too, so that no bytes of it join the field before. (Bits of
  // one byte: the stream is its buffer and 64 bytes, no more.)
  bool fieldDropped_ : 1;
  // Offsets into the buffer (under kBufferSize), two bytes each: the
  // stream is its buffer and 64 bytes.
  uint16_t fieldStart_ = 0;
  // The run of outermost fields last written (trailingFieldsFrom): where it
  // begins and where its last field ended.
  uint16_t fieldsFrom_ = 0;
  uint16_t fieldsEnd_ = 0;
  uint16_t recordedFrom_ = 0;
  detail::FieldSpans* spans_ = nullptr;
  TextFallback fallback_ = nullptr;
  void* fallbackContext_ = nullptr;
  Buffer buffer_;
};

}  // namespace muon
