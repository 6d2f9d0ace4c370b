#include "muon/base/SyslogFormat.h"

#include <string>

#include "muon/base/JsonLines.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/LogRecord.h"
#include "muon/base/Logfmt.h"

namespace muon {
namespace rfc5424 {

namespace {

std::string headerField(const std::string& value, size_t maxLength) {
  std::string field = value.substr(0, maxLength);
  for (char& c : field) {
    if (c <= ' ' || c > '~') c = '_';
  }
  return field.empty() ? "-" : field;
}

}  // namespace

int severityOf(Logger::LogLevel level) { return detail::syslogSeverity(level); }

// RFC 5424's TIMESTAMP, "2026-11-21T08:15:02.123456Z": the RFC 3339 form
// JSON lines' @timestamp has, by the same writer (LineLayout.h).
std::string utcTimestamp(Timestamp time) {
  char buf[32];
  size_t n = detail::writeDateTimeToSecond(buf, TimeZone::toUtcTime(time.secondsSinceEpoch()), true);
  detail::writeMicro(buf + n, time.microSecondsInSecond());
  n += 6;
  buf[n++] = 'Z';
  return std::string(buf, n);
}

std::string header(int facility, int severity, const std::string& timestamp,
                   const std::string& hostname, const std::string& appName, pid_t pid,
                   std::string_view structuredData) {
  std::string out = "<" + std::to_string(facility * 8 + severity) + ">1 " + timestamp + ' ' +
                    headerField(hostname, 255) + ' ' + headerField(appName, 48) + ' ' +
                    std::to_string(pid) + " - ";
  if (structuredData.empty()) {
    out += '-';
  } else {
    out.append(structuredData);
  }
  out += ' ';
  return out;
}

namespace {

// One PARAM-VALUE's bytes, escaped as the header comment says.
void appendParamValue(std::string_view value, std::string* sd) {
  const auto* p = reinterpret_cast<const unsigned char*>(value.data());
  for (size_t i = 0; i < value.size();) {
    const unsigned char c = p[i];
    if (c == '"' || c == '\\' || c == ']') {
      *sd += '\\';
      *sd += static_cast<char>(c);
      ++i;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      *sd += '\\';
      *sd += c == '\n' ? 'n' : (c == '\r' ? 'r' : 't');
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[6];
      detail::writeUnicodeEscape(escaped, c);
      sd->append(escaped, sizeof escaped);
      ++i;
    } else if (c < 0x80) {
      *sd += static_cast<char>(c);
      ++i;
    } else {
      const size_t n = detail::utf8SequenceLength(p + i, value.size() - i);
      if (n == 0) {
        sd->append("\xef\xbf\xbd", 3);  // U+FFFD
        ++i;
      } else {
        sd->append(value.data() + i, n);
        i += n;
      }
    }
  }
}

}  // namespace

std::string structuredData(std::string_view message) {
  std::string sd;
  std::string value;
  detail::readLogfmtFields(message, [&](const detail::LogfmtField& field) {
    if (sd.empty()) {
      sd += '[';
      sd.append(kStructuredDataId);
    }
    sd += ' ';
    sd.append(field.name.substr(0, kMaxParamName));
    sd += "=\"";
    value.clear();
    detail::appendLogfmtValue(field, &value);
    appendParamValue(value, &sd);
    sd += '"';
  });
  if (!sd.empty()) sd += ']';
  return sd;
}

std::string formatRecord(const LogRecord& record, int facility, const std::string& hostname,
                         const std::string& appName, pid_t pid) {
  std::string out = header(facility, severityOf(record.level), utcTimestamp(record.time), hostname,
                           appName, pid, structuredData(record.fields));
  out += std::to_string(record.tid);
  out += ' ';
  detail::appendFromLevel(&out, record);
  return out;
}

std::string formatLine(std::string_view line, int facility, const std::string& hostname,
                       const std::string& appName, pid_t pid, const TimeZone& zone) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.front() == '{') {
    std::string storage;
    LogRecord record;
    switch (detail::readJsonLine(line, &storage, &record)) {
      case detail::JsonLineKind::kParts:
        return formatRecord(record, facility, hostname, appName, pid);
      case detail::JsonLineKind::kMessage:
        return header(facility, kNotice, "-", hostname, appName, pid) + std::string(record.message);
      case detail::JsonLineKind::kOther:
        break;
    }
  }
  // A text line in muon's layout is sent as its record would be: its fields
  // are the logfmt words that end its message.
  LogRecord parsed;
  if (!detail::parseLine(line, zone, &parsed)) {
    return header(facility, kNotice, "-", hostname, appName, pid) + std::string(line);
  }
  const size_t run = detail::readLogfmtFields(parsed.message, [](const LogField&) {});
  if (run < parsed.message.size()) parsed.fields = parsed.message.substr(run > 0 ? run - 1 : 0);
  return formatRecord(parsed, facility, hostname, appName, pid);
}

}  // namespace rfc5424
}  // namespace muon
