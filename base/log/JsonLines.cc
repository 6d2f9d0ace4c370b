#include "muon/base/JsonLines.h"

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

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

// {"@timestamp":"2026-11-21T08:15:02.123456Z": the second's text made once
// per second per thread.
void appendTimestamp(int64_t second, int micro, std::string* out) {
  struct Cache {
    int64_t second = INT64_MIN;
    char text[35];  // {"@timestamp":"2026-11-21T08:15:02.
  };
  thread_local Cache cache;
  if (cache.second != second) {
    const DateTime dt = TimeZone::toUtcTime(second);
    const int year = dt.year < 0 ? 0 : (dt.year > 9999 ? 9999 : dt.year);
    char* t = cache.text;
    std::memcpy(t, "{\"@timestamp\":\"", 15);
    t += 15;
    auto two = [](char* at, int v) { writeTwoDigits(at, static_cast<unsigned>(v)); };
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
    cache.second = second;
  }
  char micros[8];
  writeMicro(micros, micro);
  micros[6] = 'Z';
  micros[7] = '"';
  out->append(cache.text, sizeof cache.text);
  out->append(micros, sizeof micros);
}

// The bytes of `bytes` escaped as in a JSON string, without the quotes.
void appendJsonEscaped(std::string_view bytes, std::string* out);

void appendField(const LogfmtField& field, std::string* scratch, std::string* out) {
  if (isReserved(field.name)) {
    scratch->assign(kFieldPrefix.data(), kFieldPrefix.size());
    scratch->append(field.name);
    appendKey(*scratch, out);
  } else {
    appendKey(field.name, out);
  }
  if (!field.quoted && isFiniteNumber(field.value)) {
    out->append(field.value);
  } else if (!field.quoted && (field.value == "true" || field.value == "false")) {
    out->append(field.value);
  } else if (!field.quoted) {
    appendJsonString(field.value, out);  // a bare value is its own bytes
  } else {
    scratch->clear();
    appendLogfmtValue(field, scratch);
    appendJsonString(*scratch, out);
  }
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
  appendJsonEscaped(bytes, out);
  out->push_back('"');
}

namespace {

void appendJsonEscaped(std::string_view bytes, std::string* out) {
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
}

}  // namespace

void appendJsonObject(const JsonLineParts& parts, std::string* out) {
  appendTimestamp(parts.second, parts.micro, out);
  out->append(",\"log.level\":\"", 14);
  out->append(levelName(parts.level));
  out->append("\",\"process.thread.id\":", 22);
  appendInt(parts.tid, out);
  if (!parts.function.empty()) {
    out->append(",\"log.origin.function\":", 23);
    appendJsonString(parts.function, out);
  }
  // The fields read back, and where they begin; what precedes them (a
  // value the line's end cut, the space before the first) stays with the
  // message.
  const std::string_view fields = parts.fields;
  thread_local std::vector<LogfmtField> read;  // kept: no allocation per line
  read.clear();
  const size_t fieldsBegin =
      fields.empty() ? 0
                     : readLogfmtFields(fields, [](const LogfmtField& f) { read.push_back(f); });
  size_t kept = fieldsBegin;
  if (fieldsBegin < fields.size() && fieldsBegin > 0 && fields[fieldsBegin - 1] == ' ') --kept;
  out->append(",\"message\":\"", 12);
  appendJsonEscaped(parts.message, out);
  appendJsonEscaped(fields.substr(0, kept), out);
  out->push_back('"');
  if (!parts.file.empty()) {
    out->append(",\"log.origin.file.name\":", 24);
    appendJsonString(parts.file, out);
    out->append(",\"log.origin.file.line\":", 24);
    appendInt(parts.line, out);
  }
  thread_local std::string scratch;  // kept: no allocation per field
  for (const LogfmtField& field : read) appendField(field, &scratch, out);
  out->append("}\n", 2);
}

void appendJsonLine(std::string_view line, const TimeZone& zone, FieldsInText fields,
                    std::string* out) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.front() == '{') {  // made as JSON
    out->append(line);
    out->push_back('\n');
    return;
  }
  Timestamp time;
  LineParts parsed;
  if (!parseLine(line, zone, &time, &parsed)) {
    out->append("{\"message\":", 11);
    appendJsonString(line, out);
    out->append("}\n", 2);
    return;
  }
  JsonLineParts parts;
  parts.second = time.secondsSinceEpoch();
  parts.micro = time.microSecondsInSecond();
  parts.level = parsed.level;
  parts.tid = parsed.tid;
  parts.function = parsed.function;
  parts.message = parsed.message;
  if (fields == FieldsInText::kRead) {
    const size_t begin = readLogfmtFields(parsed.message, [](const LogfmtField&) {});
    if (begin < parsed.message.size()) {
      parts.message = parsed.message.substr(0, begin > 0 ? begin - 1 : 0);
      parts.fields = parsed.message.substr(begin);
    }
  }
  parts.file = parsed.file;
  parts.line = parsed.line;
  appendJsonObject(parts, out);
}

bool allJsonObjects(std::string_view chunk) {
  const char* p = chunk.data();
  const char* const end = p + chunk.size();
  while (p < end) {
    if (*p != '{') return false;
    const void* newline = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (newline == nullptr) break;
    p = static_cast<const char*>(newline) + 1;
  }
  return true;
}

void appendJsonLines(std::string_view chunk, const TimeZone& zone, FieldsInText fields,
                     std::string* out) {
  while (!chunk.empty()) {
    const size_t end = chunk.find('\n');
    const size_t n = end == std::string_view::npos ? chunk.size() : end + 1;
    appendJsonLine(chunk.substr(0, n), zone, fields, out);
    chunk.remove_prefix(n);
  }
}

}  // namespace detail
}  // namespace muon
