// JournalFormat: a record as one entry of systemd-journald's native
// protocol, for JournaldSink: the encoder of the line model (LogRecord.h)
// that writes journal fields instead of a line.
//
//   LOG_WARN << "disk full" << muon::kv("trace.id", "4bf9...") << muon::kv("free", 0);
// is the datagram
//   MESSAGE=disk full
//   PRIORITY=4
//   SYSLOG_IDENTIFIER=server
//   SYSLOG_TIMESTAMP=2026-11-21T08:15:02.123456Z
//   TID=4321
//   CODE_FILE=df.cc
//   CODE_LINE=42
//   TRACE_ID=4bf9...
//   FREE=0
// one "NAME=value\n" each. PRIORITY is the syslog severity of the level
// (rfc5424::severityOf), SYSLOG_TIMESTAMP the record's time in RFC 3339 UTC
// (journald keeps its own receive time in __REALTIME_TIMESTAMP; clients
// cannot set _SOURCE_REALTIME_TIMESTAMP), CODE_FUNC the function where the
// record has one (TRACE, DEBUG). A field's name is upper-cased and every
// byte outside [A-Z0-9_] becomes '_' ("trace.id" is TRACE_ID), leading
// underscores go (journald keeps those names for itself), a name that is
// then empty, starts with a digit or is one of the names above gets
// "FIELDS_" before it, and it is cut to journald's 64 bytes. A field's value
// is the bytes it stands for (a quoted logfmt value unescaped). A value with
// '\n', another control byte or bytes that are not UTF-8 goes in the
// protocol's binary form ("NAME\n", its length as 64-bit little-endian,
// the bytes, "\n"), which journald keeps byte for byte.
//
// Internal (muon/base/internal/): JournaldSink's. Pure functions: any
// thread.
#pragma once

#include <string>
#include <string_view>

namespace muon {

struct LogRecord;

namespace journal {

// The longest field name journald accepts.
inline constexpr size_t kMaxNameLength = 64;

// The journal field name for a muon field name, as above.
std::string fieldName(std::string_view name);

// Appends one field, in the plain or the binary form as above. `name` must
// already be a journal field name.
void appendField(std::string_view name, std::string_view value, std::string* out);

// Replaces *out with the entry of `record`, SYSLOG_IDENTIFIER `identifier`.
void encodeRecord(const LogRecord& record, std::string_view identifier, std::string* out);

// Replaces *out with the entry of a line that did not come from Logger
// (ending in '\n' or not): MESSAGE the line, PRIORITY `severity` (5,
// notice, unless the line's maker knows better).
void encodeLine(std::string_view line, std::string_view identifier, std::string* out,
                int severity = 5);

}  // namespace journal
}  // namespace muon
