// JsonLines: muon's text lines as JSON lines, one object per line, with the
// Elastic Common Schema's names, for log stores that read JSON without a
// parsing rule (Elasticsearch, Loki, Vector, jq):
//
//   20261121 08:15:02.123456Z  4321 INFO  login user=alice ms=12 - auth.cc:42
// becomes
//   {"@timestamp":"2026-11-21T08:15:02.123456Z","log.level":"INFO",
//    "process.thread.id":4321,"message":"login","log.origin.file.name":"auth.cc",
//    "log.origin.file.line":42,"user":"alice","ms":12}            (one line)
//
// The time is RFC 3339 in UTC to the microsecond (a line in another zone is
// read in `zone`); TRACE and DEBUG lines add "log.origin.function". The
// fields at the message's end (Logfmt.h) become keys at the top level: a
// bare value that reads as a JSON number (finite) is a number, true/false
// are bools, anything else (a quoted value, nan, inf, 0x1f) is a string. A
// field whose name is one of the keys above, or a dotted prefix or
// extension of one ("log", "message.x"), is kept as "fields.<name>", never
// in their place. Strings are escaped per RFC 8259 (\" \\ \n \r \t \b \f,
// \u00XX for other control characters and DEL); a byte that is not part of
// valid UTF-8 becomes U+FFFD. A line not in muon's layout (the "Dropped log
// messages" report, a recovery's note) becomes {"message":"<line>"}.
//
// Every file writer converts at the same place (LogFile::Options::format),
// after the lines are formatted, so the JSON of a line is the same whichever
// path made the line (the backend, a statement, a crash recovery) and
// muon-logcat --json makes it from a text file too.
//
// Pure functions: any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace muon {

class TimeZone;

// What an output writes: muon's text lines, or JSON lines (above).
enum class LineFormat { kText, kJson };

namespace detail {

// Appends the JSON object of one text line (with or without its '\n'), and
// '\n', to `out`.
void appendJsonLine(std::string_view line, const TimeZone& zone, std::string* out);
// The same for each line of `chunk` (a last piece without '\n' too).
void appendJsonLines(std::string_view chunk, const TimeZone& zone, std::string* out);
// The length of the valid UTF-8 sequence of a code point at p (n bytes
// there), 0 if p[0] does not start one: overlong forms, surrogates and code
// points past U+10FFFF are not valid.
size_t utf8SequenceLength(const unsigned char* p, size_t n);
// `bytes` as a JSON string, quotes included, escaped as above.
void appendJsonString(std::string_view bytes, std::string* out);

}  // namespace detail
}  // namespace muon
