#include "muon/base/JsonLines.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "muon/base/LineLayout.h"
#include "muon/base/Logfmt.h"
#include "muon/base/TimeZone.h"
#include "muon/base/Timestamp.h"

namespace muon {
namespace detail {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// The ECS keys a line's own parts take; a field never overwrites them.
constexpr std::string_view kReservedKeys[] = {
    "@timestamp",         "log.level",           "process.thread.id",   "log.origin.function",
    "message",            "log.origin.file.name", "log.origin.file.line",
};
constexpr std::string_view kFieldPrefix = "fields.";

bool isReserved(std::string_view name) {
  for (std::string_view key : kReservedKeys) {
    if (name == key) return true;
    // "log" or "log.origin" (a prefix of a key), "message.x" (an extension):
    // a reader that expands dotted names would see them clash.
    if (key.size() > name.size() && key.compare(0, name.size(), name) == 0 &&
        key[name.size()] == '.') {
      return true;
    }
    if (name.size() > key.size() && name.compare(0, key.size(), key) == 0 &&
        name[key.size()] == '.') {
      return true;
    }
  }
  return false;
}

void appendKey(std::string_view key, std::string* out) {
  out->push_back(',');
  appendJsonString(key, out);
  out->push_back(':');
}

void appendInt(long long v, std::string* out) {
  char buf[24];
  out->append(buf, convertDecimal(buf, v));
}

// A bare value that reads as a JSON number and is finite as a double (a
// reader would take "1e999" as infinity or refuse it).
bool isFiniteNumber(std::string_view v) {
  if (v == "true" || v == "false" || !readsAsNumberOrBool(v)) return false;
  if (v.find_first_of(".eE") == std::string_view::npos) return true;  // an integer
  char buf[64];
  if (v.size() >= sizeof buf) return false;
  std::memcpy(buf, v.data(), v.size());
  buf[v.size()] = '\0';
  return std::isfinite(std::strtod(buf, nullptr));
}

// "2026-11-21T08:15:02.123456Z": the 'Z' line's own digits rearranged, or
// the instant written in UTC.
void appendTimestamp(const LineParts& parts, Timestamp time, std::string* out) {
  char t[27];
  if (parts.utc) {
    const std::string_view d = parts.dateTime;  // "20261121 08:15:02.123456Z"
    std::memcpy(t, d.data(), 4);
    t[4] = '-';
    std::memcpy(t + 5, d.data() + 4, 2);
    t[7] = '-';
    std::memcpy(t + 8, d.data() + 6, 2);
    t[10] = 'T';
    std::memcpy(t + 11, d.data() + 9, 15);
    t[26] = 'Z';
  } else {
    const DateTime dt = TimeZone::toUtcTime(time.secondsSinceEpoch());
    const int year = dt.year < 0 ? 0 : (dt.year > 9999 ? 9999 : dt.year);
    auto two = [&](char* at, int v) { writeTwoDigits(at, static_cast<unsigned>(v)); };
    two(t, year / 100);
    two(t + 2, year % 100);
    t[4] = '-';
    two(t + 5, dt.month);
    t[7] = '-';
    two(t + 8, dt.day);
    t[10] = 'T';
    two(t + 11, dt.hour);
    t[13] = ':';
    two(t + 14, dt.minute);
    t[16] = ':';
    two(t + 17, dt.second);
    t[19] = '.';
    writeMicro(t + 20, time.microSecondsInSecond());
    t[26] = 'Z';
  }
  out->append("{\"@timestamp\":\"", 15);
  out->append(t, sizeof t);
  out->push_back('"');
}

}  // namespace

size_t utf8SequenceLength(const unsigned char* p, size_t n) {
  const unsigned char c = p[0];
  auto cont = [&](size_t i) { return i < n && (p[i] & 0xc0) == 0x80; };
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0;   // overlong
    if (c == 0xed && p[1] >= 0xa0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xf0 && p[1] < 0x90) return 0;   // overlong
    if (c == 0xf4 && p[1] >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

void appendJsonString(std::string_view bytes, std::string* out) {
  out->push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    // A run of bytes that need nothing, copied at once.
    size_t j = i;
    while (j < n && p[j] >= 0x20 && p[j] < 0x7f && p[j] != '"' && p[j] != '\\') ++j;
    out->append(bytes.data() + i, j - i);
    i = j;
    if (i == n) break;
    const unsigned char c = p[i];
    if (c >= 0x80) {
      const size_t len = utf8SequenceLength(p + i, n - i);
      if (len == 0) {
        out->append("\xef\xbf\xbd", 3);  // U+FFFD
        ++i;
      } else {
        out->append(bytes.data() + i, len);
        i += len;
      }
      continue;
    }
    char esc[6] = {'\\', 0, 0, 0, 0, 0};
    size_t len = 2;
    switch (c) {
      case '"':
      case '\\':
        esc[1] = static_cast<char>(c);
        break;
      case '\n':
        esc[1] = 'n';
        break;
      case '\r':
        esc[1] = 'r';
        break;
      case '\t':
        esc[1] = 't';
        break;
      case '\b':
        esc[1] = 'b';
        break;
      case '\f':
        esc[1] = 'f';
        break;
      default:
        std::memcpy(esc + 1, "u00", 3);
        esc[4] = kHex[c >> 4];
        esc[5] = kHex[c & 0xf];
        len = 6;
        break;
    }
    out->append(esc, len);
    ++i;
  }
  out->push_back('"');
}

void appendJsonLine(std::string_view line, const TimeZone& zone, std::string* out) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  Timestamp time;
  LineParts parts;
  if (!parseLine(line, zone, &time, &parts)) {
    out->append("{\"message\":", 11);
    appendJsonString(line, out);
    out->append("}\n", 2);
    return;
  }
  appendTimestamp(parts, time, out);
  out->append(",\"log.level\":\"", 14);
  out->append(levelName(parts.level));
  out->append("\",\"process.thread.id\":", 22);
  appendInt(parts.tid, out);
  if (!parts.function.empty()) {
    out->append(",\"log.origin.function\":", 23);
    appendJsonString(parts.function, out);
  }
  // The fields are read first: the message is what comes before them.
  const std::string_view message = parts.message;
  const size_t fieldsBegin = readLogfmtFields(message, [](const LogfmtField&) {});
  out->append(",\"message\":", 11);
  appendJsonString(message.substr(0, fieldsBegin > 0 && fieldsBegin < message.size()
                                         ? fieldsBegin - 1
                                         : fieldsBegin),
                   out);
  if (!parts.file.empty()) {
    out->append(",\"log.origin.file.name\":", 24);
    appendJsonString(parts.file, out);
    out->append(",\"log.origin.file.line\":", 24);
    appendInt(parts.line, out);
  }
  if (fieldsBegin < message.size()) {
    std::string value;
    std::string key;
    readLogfmtFields(message.substr(fieldsBegin), [&](const LogfmtField& field) {
      if (isReserved(field.name)) {
        key.assign(kFieldPrefix.data(), kFieldPrefix.size());
        key.append(field.name);
        appendKey(key, out);
      } else {
        appendKey(field.name, out);
      }
      if (!field.quoted && isFiniteNumber(field.value)) {
        out->append(field.value);
      } else if (!field.quoted && (field.value == "true" || field.value == "false")) {
        out->append(field.value);
      } else {
        value.clear();
        appendLogfmtValue(field, &value);
        appendJsonString(value, out);
      }
    });
  }
  out->append("}\n", 2);
}

void appendJsonLines(std::string_view chunk, const TimeZone& zone, std::string* out) {
  while (!chunk.empty()) {
    const size_t end = chunk.find('\n');
    const size_t n = end == std::string_view::npos ? chunk.size() : end + 1;
    appendJsonLine(chunk.substr(0, n), zone, out);
    chunk.remove_prefix(n);
  }
}

}  // namespace detail
}  // namespace muon
