#include "muon/base/internal/JournalFormat.h"

#include <cstdint>
#include <string>

#include "muon/base/JsonLines.h"
#include "muon/base/LogRecord.h"
#include "muon/base/Logfmt.h"
#include "muon/base/SyslogFormat.h"
#include "muon/base/internal/LineEncoders.h"

namespace muon {
namespace journal {

namespace {

// The names the encoder writes itself: a field of the same name is kept as
// FIELDS_<name>, never in their place.
bool isReservedName(std::string_view name) {
  static const std::string_view kReserved[] = {"MESSAGE",         "PRIORITY",         "SYSLOG_IDENTIFIER",
                                               "SYSLOG_TIMESTAMP", "TID",              "CODE_FILE",
                                               "CODE_LINE",       "CODE_FUNC"};
  for (std::string_view r : kReserved) {
    if (name == r) return true;
  }
  return false;
}

// Whether `value` can go as "NAME=value\n": printable text (tab allowed)
// in valid UTF-8.
bool isPlainText(std::string_view value) {
  const auto* p = reinterpret_cast<const unsigned char*>(value.data());
  for (size_t i = 0; i < value.size();) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
      ++i;
      continue;
    }
    const size_t n = detail::utf8SequenceLength(p + i, value.size() - i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void appendNumberField(std::string_view name, long long value, std::string* out) {
  out->append(name);
  *out += '=';
  out->append(std::to_string(value));
  *out += '\n';
}

void appendHead(std::string_view message, int priority, std::string_view identifier,
                std::string* out) {
  out->clear();
  appendField("MESSAGE", message, out);
  appendNumberField("PRIORITY", priority, out);
  if (!identifier.empty()) appendField("SYSLOG_IDENTIFIER", identifier, out);
}

}  // namespace

std::string fieldName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c >= 'a' && c <= 'z') {
      out += static_cast<char>(c - 'a' + 'A');
    } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      out += c;
    } else {
      out += '_';
    }
  }
  const size_t first = out.find_first_not_of('_');
  out.erase(0, first == std::string::npos ? out.size() : first);
  if (out.empty() || (out[0] >= '0' && out[0] <= '9') || isReservedName(out)) {
    out.insert(0, "FIELDS_");
  }
  if (out.size() > kMaxNameLength) out.resize(kMaxNameLength);
  return out;
}

void appendField(std::string_view name, std::string_view value, std::string* out) {
  out->append(name);
  if (isPlainText(value)) {
    *out += '=';
    out->append(value);
  } else {
    *out += '\n';
    uint64_t length = value.size();
    for (int i = 0; i < 8; ++i) {
      *out += static_cast<char>(length & 0xff);
      length >>= 8;
    }
    out->append(value);
  }
  *out += '\n';
}

void encodeRecord(const LogRecord& record, std::string_view identifier, std::string* out) {
  thread_local std::string value;  // kept: no allocation per field
  detail::messageThenFields(
      record,
      [&](const detail::MessageAndFields& m) {
        value.assign(m.message);
        value.append(m.kept);
        appendHead(value, rfc5424::severityOf(record.level), identifier, out);
        appendField("SYSLOG_TIMESTAMP", rfc5424::utcTimestamp(record.time), out);
        appendNumberField("TID", record.tid, out);
        if (!record.file.empty()) {
          appendField("CODE_FILE", record.file, out);
          appendNumberField("CODE_LINE", record.line, out);
        }
        if (!record.function.empty()) appendField("CODE_FUNC", record.function, out);
      },
      [&](const LogField& field) {
        value.clear();
        detail::appendLogfmtValue(field, &value);
        appendField(fieldName(field.name), value, out);
      });
}

void encodeLine(std::string_view line, std::string_view identifier, std::string* out,
                int severity) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  appendHead(line, severity, identifier, out);
}

}  // namespace journal
}  // namespace muon
