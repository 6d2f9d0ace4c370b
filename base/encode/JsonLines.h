// JsonLines: log lines as JSON lines, one object per line, with the
// Elastic Common Schema's names, for log stores that read JSON without a
// parsing rule (Elasticsearch, Loki, Vector, jq):
//
//   LOG_INFO << "login" << muon::kv("user", "alice") << muon::kv("ms", 12);
// is
//   {"@timestamp":"2026-11-21T08:15:02.123456Z","log.level":"INFO",
//    "process.thread.id":4321,"message":"login","log.origin.file.name":"auth.cc",
//    "log.origin.file.line":42,"user":"alice","ms":12}            (one line)
//
// The time is RFC 3339 in UTC to the microsecond; TRACE and DEBUG lines add
// "log.origin.function". The fields are the statement's muon::kv operands
// (and its context's) that end its message, and only those: the stream
// that wrote them says where they begin (LogStream::trailingFieldsFrom), so
// a message "x user=bob" stays a message. A field's value keeps its kind: a
// number or a bool written bare that reads as a finite JSON number, or
// true/false, is one; anything else (a string, even "12"; nan, inf, Fmt's
// text) is a string. A field whose name is one of the keys above, or a
// dotted prefix or extension of one ("log", "message.x"), is kept as
// "fields.<name>", never in their place. Strings are escaped per RFC 8259
// (\" \\ \n \r \t \b \f, \u00XX for other control characters and DEL); a byte
// that is not part of valid UTF-8 becomes U+FFFD.
//
// Who makes the JSON: whoever formats the line, from what it knows of it:
// AsyncLogging's backend and a crash recovery from the recorded operands
// (RecordFormatter.h), a statement that formats its own line from its
// LogRecord (a sink that writes JSON takes records). A log file that writes
// JSON (LogFile::Options::format) keeps lines that are JSON objects already
// and turns any other line given to it (a text line appended directly, the
// "Dropped log messages" report) into an object whose message is the whole
// text after the level: the file never reads fields out of text. Only
// muon-logcat --json, which has nothing but text, reads the logfmt words at
// a message's end as fields (appendJsonLine with FieldsInText::kRead).
// The shipper reads a JSON file's lines back into their parts (readJsonLine)
// to send each as its text line would be (SyslogFormat.h).
//
// Pure functions: any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "muon/base/LineFormat.h"

namespace muon {

class TimeZone;
struct LogRecord;

namespace detail {

// {"message":"<line>"} and '\n' (a line not in muon's layout), appended to `out`.
void appendJsonMessage(std::string_view line, std::string* out);

// Whether a text line's fields are read from the words at its message's end.
enum class FieldsInText { kNone, kRead };
// Appends the JSON object of one line (with or without its '\n'), and '\n',
// to `out`: appendTextLine (LineEncoders.h) with the JSON encoder: a JSON
// object as it is, a text line in muon's layout taken apart (its message
// whole, or, with kRead, without the logfmt words at its end, which become
// the fields), any other line as {"message":"<line>"}.
void appendJsonLine(std::string_view line, const TimeZone& zone, FieldsInText fields,
                    std::string* out);
// The same for each line of `chunk` (a last piece without '\n' too).
void appendJsonLines(std::string_view chunk, const TimeZone& zone, FieldsInText fields,
                     std::string* out);
// Whether every line of `chunk` is a JSON object already (starts with '{').
bool allJsonObjects(std::string_view chunk);
// Whether `name` is one of the keys a line's own parts take, or a dotted
// prefix or extension of one: a field so named is written "fields.<name>".
bool isReservedJsonKey(std::string_view name);

// What readJsonLine found in a line.
enum class JsonLineKind {
  kOther,    // not a line muon writes as JSON
  kMessage,  // {"message":"..."}: a line not in muon's layout (appendJsonMessage)
  kParts,    // an object the JSON encoder writes: every part of a line
};
// Reads back a line of a JSON log file (with or without its '\n'), the
// inverse of the JSON encoder (LineEncoders.h) and appendJsonMessage
// (JsonLineReader.cc). For kParts, *record holds the line's parts, each as
// the text line shows it (no text, no fieldList):
// strings unescaped, and the fields in their logfmt form with the space
// before each, as a stream writes them (a JSON string as text, quoted if it
// reads as a number; a number or a bool bare; "fields.<name>" of a reserved
// name back to <name>); the views point into *storage, the message ending
// in the fields, as a record's does. For kMessage, record->message is the
// wrapped line. Any other line (not
// JSON; JSON muon does not write: null, an array or an object as a value, a
// key missing, repeated, or not a field's name; a malformed time) is kOther.
JsonLineKind readJsonLine(std::string_view line, std::string* storage, LogRecord* record);

// The length of the valid UTF-8 sequence of a code point at p (n bytes
// there), 0 if p[0] does not start one: overlong forms, surrogates and code
// points past U+10FFFF are not valid.
size_t utf8SequenceLength(const unsigned char* p, size_t n);
// `bytes` as a JSON string, quotes included, escaped as above.
void appendJsonString(std::string_view bytes, std::string* out);

}  // namespace detail
}  // namespace muon
