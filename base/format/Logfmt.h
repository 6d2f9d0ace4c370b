// Logfmt: how a key-value field (LogFields.h, muon::kv) reads in a text line,
// in one place: the encoder every path that formats a line uses (a statement
// formatting its own line, AsyncLogging's backend replaying a record, a
// crash-safe recovery), and the parser that reads the fields back (JSON
// lines, muon-logcat --json, the syslog structured data).
//
//   login user=alice ms=12 note="two words" empty="" id="12" - file.cc:42
//
// A field is " name=value" after the message. The name keeps [A-Za-z0-9_.-]
// and turns any other byte into '_', at most kMaxName bytes ("_" if empty),
// so that it never needs quoting. The value is written bare unless it is
// empty or holds a space, '"', '=', '\\' or a control character (below 0x20,
// DEL), or is text that would read as a number or a bool ("12", "true"):
// then it is quoted, with \" \\ \n \r \t and \u00XX for the other control
// characters, so that a logfmt parser gets the value's bytes back exactly and
// a reader can tell the string "12" from the number 12. Other bytes
// (UTF-8 or not) are kept as they are.
//
// Pure functions: any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace muon {

// One of a line's fields (muon::kv) as the line shows it: its name, and its
// value in its logfmt form, bare or quoted (with its quotes and escapes;
// appendLogfmtValue gives its bytes back). The views point into the line.
struct LogField {
  std::string_view name;
  std::string_view value;
  bool quoted = false;
};

namespace detail {

// A control byte, which every line format escapes: below 0x20, or DEL.
constexpr bool isControlByte(unsigned char c) { return c < 0x20 || c == 0x7f; }

inline constexpr size_t kMaxFieldName = 64;

// Whether c may stay in a field's name.
constexpr bool isFieldNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}
// Per byte: kQuotedByte if a value holding it is quoted (space, '"', '=',
// backslash, a control character), kNameByte if it may stay in a name; one
// look-up a byte.
inline constexpr unsigned char kQuotedByte = 1;
inline constexpr unsigned char kNameByte = 2;
struct LogfmtBytes {
  unsigned char of[256];
  constexpr LogfmtBytes() : of() {
    for (int c = 0; c < 256; ++c) {
      const bool special = isControlByte(static_cast<unsigned char>(c)) || c == ' ' || c == '"' ||
                           c == '=' || c == '\\';
      of[c] = static_cast<unsigned char>((special ? kQuotedByte : 0) |
                                         (isFieldNameByte(static_cast<char>(c)) ? kNameByte : 0));
    }
  }
};
inline constexpr LogfmtBytes kLogfmtBytes;
// Whether `name` is a field's name as a line keeps it: 1 to kMaxFieldName
// bytes, each isFieldNameByte. Inline: the JSON encoder asks it of every
// field of every line.
inline bool isFieldName(std::string_view name) {
  if (name.empty() || name.size() > kMaxFieldName) return false;
  for (const char c : name) {
    if ((kLogfmtBytes.of[static_cast<unsigned char>(c)] & kNameByte) == 0) return false;
  }
  return true;
}
// Writes "\u00XX" for the byte c at p (6 bytes): the escape of a control
// character that logfmt, JSON (JsonLines.h) and RFC 5424 PARAM-VALUEs
// (SyslogFormat.h) share.
inline void writeUnicodeEscape(char* p, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::memcpy(p, "\\u00", 4);
  p[4] = kHex[c >> 4];
  p[5] = kHex[c & 0xf];
}
// The value of a hexadecimal digit, -1 if c is not one; and the code point
// cp (at most U+10FFFF) as UTF-8 appended to `out`: the \u escapes of
// logfmt and JSON (JsonLines.h) read back.
int hexValue(char c);
// The byte a two-character escape \<e> stands for, as logfmt and JSON
// write them (\" \\ \/ \b \f \n \r \t), 0 if <e> starts none.
constexpr char unescapedByte(char e) {
  switch (e) {
    case '"':
    case '\\':
    case '/':
      return e;
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return 0;
  }
}
void appendUtf8(uint32_t cp, std::string* out);
// Writes `name` as a field's name at p (room for kMaxFieldName bytes);
// returns its length (at least 1).
size_t writeFieldName(char* p, std::string_view name);

// Whether [p, p+len) may hold a byte that gets a value quoted (a space,
// '"', '=', '\\', a control character): false means it holds none; true
// may also come of a '!'. Eight bytes at a time (the last word overlapping
// the one before), so that the common value, which needs nothing, is passed
// over in a few instructions.
inline bool mayNeedQuotes(const char* p, size_t len) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto hits = [](uint64_t x) {
    auto hasZero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
    // Below 0x23: control characters, ' ', '!' and '"'.
    const uint64_t below = (x - kOnes * 0x23) & ~x & kHigh;
    return (below | hasZero(x ^ (kOnes * '=')) | hasZero(x ^ (kOnes * '\\')) |
            hasZero(x ^ (kOnes * 0x7f))) != 0;
  };
  if (len >= 8) {
    uint64_t w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
      std::memcpy(&w, p + i, 8);
      if (hits(w)) return true;
    }
    if (i == len) return false;
    std::memcpy(&w, p + len - 8, 8);
    return hits(w);
  }
  if (len >= 4) {  // two overlapping 4-byte words, in one 8-byte word
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + len - 4, 4);
    return hits(uint64_t{a} | uint64_t{b} << 32);
  }
  // One to three bytes, repeated to fill four (the bytes tested are the
  // value's).
  auto byte = [p](size_t i) { return uint32_t{static_cast<unsigned char>(p[i])}; };
  const uint32_t a = byte(0) | byte(len > 1 ? 1 : 0) << 8 | byte(len - 1) << 16 |
                     byte(len > 2 ? 2 : 0) << 24;
  return hits(uint64_t{a} | uint64_t{a} << 32);
}

// Whether a text value starting with c may read as a number or a bool.
inline bool mayReadAsNumberOrBool(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == 't' || c == 'f';
}

// Whether v reads as a JSON number (RFC 8259's grammar) or true/false: a
// bare value that does is taken as one by the readers.
bool readsAsNumberOrBool(std::string_view v);

// The value in [p, p+len), written raw, becomes its logfmt form in place;
// `room` >= len bytes are writable from p. `text`: the value came from
// strings (quoted if it reads as a number or a bool). Returns the new
// length. A quoted value that does not fit in `room` is cut (never inside an
// escape) and still closed with its '"'; *cut (if given) says whether it was.
size_t encodeLogfmtValue(char* p, size_t len, size_t room, bool text, bool* cut = nullptr);
// The same form of the value [p, p+len) written at `out` (room for
// 2 + 6 * len bytes), for the encoders of whole lines: never cut. Returns
// its length.
size_t writeLogfmtValue(char* out, const char* p, size_t len, bool text);

// One field as a line holds it (LogField, below).
using LogfmtField = LogField;

// Reads the fields at the end of `message`: the longest run of
// space-separated " name=value" tokens (as the encoder writes them) that
// reaches its end. Returns where the run begins (message.size() if there is
// none): the message proper is what comes before, without the space. Calls
// `onField` for each field, in order, once the run is known. Linear in the
// message's length.
template <typename OnField>
size_t readLogfmtFields(std::string_view message, OnField onField);

// The bytes a field's value stands for: a bare value as it is, a quoted one
// unescaped. Appends them to `out`.
void appendLogfmtValue(const LogfmtField& field, std::string* out);

// The length of a valid token at message[i..] ("name=value" up to a space or
// the end), 0 if there is none. Used by readLogfmtFields.
size_t logfmtTokenAt(std::string_view message, size_t i, LogfmtField* field);

template <typename OnField>
size_t readLogfmtFields(std::string_view message, OnField onField) {
  // Forward, once: a token starts the message or follows a space; a run of
  // tokens is broken by anything that is not one.
  size_t runStart = message.size();
  size_t i = 0;
  bool inRun = false;
  while (i < message.size()) {
    LogfmtField field;
    const size_t n = (i == 0 || message[i - 1] == ' ') ? logfmtTokenAt(message, i, &field) : 0;
    if (n > 0) {
      if (!inRun) runStart = i;
      inRun = true;
      i += n;
      if (i == message.size()) break;
      ++i;  // the space after it
      if (i == message.size()) inRun = false;  // a trailing space ends no run
      continue;
    }
    inRun = false;
    runStart = message.size();
    const size_t space = message.find(' ', i);
    i = space == std::string_view::npos ? message.size() : space + 1;
  }
  if (!inRun) return message.size();
  for (size_t j = runStart; j < message.size();) {
    LogfmtField field;
    const size_t n = logfmtTokenAt(message, j, &field);
    onField(field);
    j += n + 1;
  }
  return runStart;
}

}  // namespace detail
}  // namespace muon
