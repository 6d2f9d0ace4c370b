// SyslogFormat: muon's lines as RFC 5424 syslog messages, in one place, for
// SyslogSink (from records and loose lines) and for the RELP shipper
// (net/relp/LogShipper.h, from the lines of log files).
//
//   20261121 16:15:02.123456  4321 WARN  disk full - df.cc:42   (in UTC+8)
// becomes
//   <12>1 2026-11-21T08:15:02.123456Z myhost server 4321 - - 4321 WARN  disk full - df.cc:42
//
// The severity comes from the level (TRACE and DEBUG: debug, INFO: info,
// WARN: warning, ERROR: err, FATAL: crit), the time is always written in UTC,
// and MSG is the line without its date-time: the thread id, then everything
// from the level on. No MSGID. The key-value fields at the message's end
// (muon::kv, LogContext; Logfmt.h) also go into STRUCTURED-DATA, as
//   [muon@32473 user="alice" ms="12"]
// (32473: the enterprise number RFC 5612 reserves for documentation), names
// cut to the 32 characters an SD-NAME may have, values with '"', '\' and ']'
// escaped as RFC 5424 says, control characters as logfmt writes them (\n,
// \u001b: a PARAM-VALUE has no escape for them) and bytes that are not valid
// UTF-8 as U+FFFD; so rsyslog's %structured-data% and mmpstrucdata see them.
// MSG keeps them too. Pure functions: any thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"
#include "muon/base/Timestamp.h"

namespace muon {

struct LogRecord;

namespace rfc5424 {

// RFC 5424 severities muon uses.
inline constexpr int kCritical = 2;
inline constexpr int kError = 3;
inline constexpr int kWarning = 4;
inline constexpr int kNotice = 5;
inline constexpr int kInformational = 6;
inline constexpr int kDebug = 7;

// A level's syslog severity (detail::syslogSeverity, LineLayout.h).
int severityOf(Logger::LogLevel level);

// RFC 3339 in UTC, to the microsecond: "2026-11-21T08:15:02.123456Z".
std::string utcTimestamp(Timestamp time);

// "<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - SD ", MSG to follow; SD is
// `structuredData`, or "-" when it is empty. Header fields are made
// printable ASCII without spaces, of bounded length.
std::string header(int facility, int severity, const std::string& timestamp,
                   const std::string& hostname, const std::string& appName, pid_t pid,
                   std::string_view structuredData = std::string_view());

// The SD-ID of muon's fields, and the longest SD-NAME.
inline constexpr std::string_view kStructuredDataId = "muon@32473";
inline constexpr size_t kMaxParamName = 32;
// `[muon@32473 name="value" ...]` for the fields at the end of a line's
// message; "" if it has none.
std::string structuredData(std::string_view message);

// The message for a record (LogRecord.h): severity from its level, its time
// in UTC, its fields as STRUCTURED-DATA, MSG its line from the thread id on.
std::string formatRecord(const LogRecord& record, int facility, const std::string& hostname,
                         const std::string& appName, pid_t pid);

// The message for one line of a muon log file (with or without its '\n'),
// text or JSON: one builder, formatRecord's, for both. A text line in
// muon's layout is taken apart (LineLayout.h, parseLine; its date-time read
// in `zone` unless it ends in 'Z', UTC) and sent as its record, with the
// logfmt words that end its message as the fields. A JSON line muon wrote (JsonLines.h, readJsonLine) is sent
// as its record would be, with MSG the text line's: the same bytes as for
// the line written as text, but where JSON cannot say what text does (a
// byte that is not UTF-8 became U+FFFD) and where it says more (the fields
// are the statement's, not the logfmt words that end the message); a JSON
// line that wraps a line not in muon's layout ({"message":...}) is sent as
// that line. Any other line is sent whole as MSG with severity notice and no
// time ("-": the daemon stamps it).
std::string formatLine(std::string_view line, int facility, const std::string& hostname,
                       const std::string& appName, pid_t pid, const TimeZone& zone);

}  // namespace rfc5424
}  // namespace muon
