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
#include <string>
#include <string_view>

namespace muon {
namespace detail {

inline constexpr size_t kMaxFieldName = 64;

// Whether c may stay in a field's name.
constexpr bool isFieldNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}
// Writes `name` as a field's name at p (room for kMaxFieldName bytes);
// returns its length (at least 1).
size_t writeFieldName(char* p, std::string_view name);

// Whether v reads as a JSON number (RFC 8259's grammar) or true/false: a
// bare value that does is taken as one by the readers.
bool readsAsNumberOrBool(std::string_view v);

// The value in [p, p+len), written raw, becomes its logfmt form in place;
// `room` >= len bytes are writable from p. `text`: the value came from
// strings (quoted if it reads as a number or a bool). Returns the new
// length. A quoted value that does not fit in `room` is cut (never inside an
// escape) and still closed with its '"'.
size_t encodeLogfmtValue(char* p, size_t len, size_t room, bool text);

// One field as a line holds it.
struct LogfmtField {
  std::string_view name;
  std::string_view value;  // as written: quoted (with its quotes and escapes) or bare
  bool quoted = false;
};

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
