#include "muon/base/JsonLines.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "muon/base/internal/LineLayout.h"
#include "muon/base/Logfmt.h"
#include "muon/base/TimeZone.h"
#include "muon/base/Timestamp.h"

namespace muon {
namespace detail {

namespace {

// The ECS keys a line's own parts take; a field never overwrites them.
constexpr std::string_view kReservedKeys[] = {
    "@timestamp",         "log.level",           "process.thread.id",   "log.origin.function",
    "message",            "log.origin.file.name", "log.origin.file.line",
};

bool isReserved(std::string_view name) {
  // Every key starts with one of these: most names are passed at once.
  const char c = name.empty() ? '\0' : name[0];
  if (c != '@' && c != 'l' && c != 'm' && c != 'p') return false;
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

// A bare value that reads as a JSON number (RFC 8259's grammar) and is
// finite as a double (a reader would take "1e999" as infinity or refuse
// it). One pass; strtod only for an exponent of three digits or more.
bool isFiniteNumber(std::string_view v) {
  const char* p = v.data();
  const char* const end = p + v.size();
  auto digits = [&]() {
    const char* from = p;
    while (p < end && *p >= '0' && *p <= '9') ++p;
    return static_cast<size_t>(p - from);
  };
  if (p < end && *p == '-') ++p;
  if (p == end) return false;
  if (*p == '0') {
    ++p;
  } else if (digits() == 0) {
    return false;
  }
  if (p < end && *p == '.') {
    ++p;
    if (digits() == 0) return false;
  }
  if (p == end) return true;
  if (*p != 'e' && *p != 'E') return false;
  ++p;
  if (p < end && (*p == '+' || *p == '-')) ++p;
  const size_t exponent = digits();
  if (exponent == 0 || p != end) return false;
  if (exponent <= 2) return true;  // no mantissa overflows with it
  char buf[64];
  if (v.size() >= sizeof buf) return false;
  std::memcpy(buf, v.data(), v.size());
  buf[v.size()] = '\0';
  return std::isfinite(std::strtod(buf, nullptr));
}

// Which bytes a JSON string cannot hold as they are: control characters,
// '"', '\\', DEL (1), and the bytes >= 0x80 that must be checked as UTF-8 (2).
struct EscapeTable {
  unsigned char kind[256];
  constexpr EscapeTable() : kind() {
    for (int c = 0; c < 256; ++c) {
      kind[c] = c < 0x20 || c == '"' || c == '\\' || c == 0x7f ? 1 : (c >= 0x80 ? 2 : 0);
    }
  }
};
constexpr EscapeTable kEscape;

// The length of the run of bytes at p (n of them) that kEscape does not
// mark: 16 at a time with SSE2 (every x86-64 has it; the last 16 or 8
// overlapping the ones before), else one at a time.
inline size_t cleanRunLength(const unsigned char* p, size_t n) {
#if defined(__SSE2__)
  // The marked bytes of a block, a bit each. Signed compare: bytes from
  // 0x80 are negative, so they count as below 0x20, as wanted.
  auto marked = [](__m128i v) {
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(v, _mm_set1_epi8('"'))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))));
    return static_cast<unsigned>(_mm_movemask_epi8(hit));
  };
  // The first marked byte at or after `from` in the block at p + at, of
  // `width` (8 or 16) bytes; n if there is none.
  auto firstIn = [&](size_t at, size_t width, size_t from) -> size_t {
    const __m128i v = width == 16 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at))
                                  : _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + at));
    unsigned mask = marked(v) & (width == 16 ? 0xffffu : 0xffu);
    mask >>= from - at;
    return mask == 0 ? n : from + static_cast<size_t>(__builtin_ctz(mask));
  };
  if (n >= 16) {
    size_t j = 0;
    for (; j + 16 <= n; j += 16) {
      const size_t hit = firstIn(j, 16, j);
      if (hit != n) return hit;
    }
    return j == n ? n : firstIn(n - 16, 16, j);
  }
  if (n >= 8) {
    const size_t hit = firstIn(0, 8, 0);
    return hit != n ? hit : firstIn(n - 8, 8, 8);
  }
#endif
  size_t j = 0;
  while (j < n && kEscape.kind[p[j]] == 0) ++j;
  return j;
}
// Writes a JSON line at p. The caller gives it room for what it writes
// (jsonObjectCapacity): no check per byte.
class JsonWriter {
 public:
  explicit JsonWriter(char* p) : p_(p) {}
  char* end() const { return p_; }

  void raw(const char* s, size_t n) {
    if (n <= 32) {
      copyShort(p_, s, n);
    } else {
      std::memcpy(p_, s, n);
    }
    p_ += n;
  }
  void raw(std::string_view s) { raw(s.data(), s.size()); }
  template <size_t N>
  void literal(const char (&s)[N]) {
    raw(s, N - 1);
  }
  void put(char c) { *p_++ = c; }
  void integer(long long v) { p_ += convertDecimal(p_, v); }
  void string(std::string_view bytes) {
    put('"');
    escaped(bytes);
    put('"');
  }

  // `bytes` as the inside of a JSON string: RFC 8259's escapes, U+FFFD for
  // a byte that is not part of valid UTF-8. At most 6 bytes out per byte in.
  void escaped(std::string_view bytes) {
    const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
    const size_t n = bytes.size();
    size_t i = 0;
    while (i < n) {
      // A run of bytes that need nothing, copied at once.
      const size_t j = i + cleanRunLength(s + i, n - i);
      raw(bytes.data() + i, j - i);
      i = j;
      if (i == n) break;
      const unsigned char c = s[i];
      if (c >= 0x80) {
        const size_t len = utf8SequenceLength(s + i, n - i);
        if (len == 0) {
          literal("\xef\xbf\xbd");  // U+FFFD
          ++i;
        } else {
          raw(bytes.data() + i, len);
          i += len;
        }
        continue;
      }
      // A two-character escape where RFC 8259 has one, else \u00XX.
      char letter = 0;
      switch (c) {
        case '"':
        case '\\':
          letter = static_cast<char>(c);
          break;
        case '\n':
          letter = 'n';
          break;
        case '\r':
          letter = 'r';
          break;
        case '\t':
          letter = 't';
          break;
        case '\b':
          letter = 'b';
          break;
        case '\f':
          letter = 'f';
          break;
        default:
          break;
      }
      if (letter != 0) {
        put('\\');
        put(letter);
      } else {
        writeUnicodeEscape(p_, c);
        p_ += 6;
      }
      ++i;
    }
  }

  // {"@timestamp":"2026-11-21T08:15:02.123456Z": the second's text made
  // once per second per thread.
  void timestamp(int64_t second, int micro) {
    struct Cache {
      int64_t second = INT64_MIN;
      char text[35];  // {"@timestamp":"2026-11-21T08:15:02.
    };
    thread_local Cache cache;
    if (cache.second != second) {
      std::memcpy(cache.text, "{\"@timestamp\":\"", 15);
      writeDateTimeToSecond(cache.text + 15, TimeZone::toUtcTime(second), true);
      cache.second = second;
    }
    raw(cache.text, sizeof cache.text);
    writeMicro(p_, micro);
    p_ += 6;
    literal("Z\"");
  }

  // A field: its key (under "fields." if reserved; a name holds only
  // [A-Za-z0-9_.-], nothing to escape) and its value, typed as JsonLines.h
  // says. `scratch` holds a quoted value's bytes.
  void field(const LogfmtField& f, std::string* scratch) {
    if (isReserved(f.name)) {
      literal(",\"fields.");
    } else {
      literal(",\"");
    }
    raw(f.name);
    literal("\":");
    if (f.quoted) {
      scratch->clear();
      appendLogfmtValue(f, scratch);
      string(*scratch);
    } else if (isFiniteNumber(f.value) || f.value == "true" || f.value == "false") {
      raw(f.value);
    } else {
      string(f.value);  // a bare value is its own bytes
    }
  }

  // The fields of a run a stream wrote (" a=1 b=\"x y\""), read and
  // written in one pass; false, with a part of them written, if it is not
  // such a run (a value cut by the line's end). A bare value the encoder
  // wrote holds no space, so it ends at the next one.
  bool writtenFields(std::string_view run, std::string* scratch) {
    const size_t n = run.size();
    size_t i = 0;
    while (i < n) {
      if (run[i] != ' ') return false;
      const size_t name = ++i;
      while (i < n && isFieldNameByte(run[i])) ++i;
      if (i == name || i == n || run[i] != '=' || i - name > kMaxFieldName) return false;
      LogfmtField f;
      if (i + 1 < n && run[i + 1] == '"') {
        const size_t len = logfmtTokenAt(run, name, &f);
        if (len == 0) return false;
        i = name + len;
      } else {
        f.name = run.substr(name, i - name);
        const size_t value = ++i;
        while (i < n && run[i] != ' ') ++i;
        if (i == value) return false;
        f.value = run.substr(value, i - value);
        f.quoted = false;
      }
      field(f, scratch);
    }
    return true;
  }

  // Back to an earlier place: what was written after it is dropped.
  void rewind(char* to) { p_ = to; }

 private:
  char* p_;
};

}  // namespace

bool isReservedJsonKey(std::string_view name) { return isReserved(name); }

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
  const size_t old = out->size();
  out->resize(old + 2 + 6 * bytes.size());
  JsonWriter w(out->data() + old);
  w.string(bytes);
  out->resize(static_cast<size_t>(w.end() - out->data()));
}

size_t jsonObjectCapacity(const JsonLineParts& parts) {
  // Each byte of text 6 bytes at most (\u00XX); a field of n >= 4 bytes
  // (" a=1") adds at most `,"fields.":` and its quotes: 13 <= 3.25 n.
  return kJsonObjectOverhead +
         6 * (parts.function.size() + parts.message.size() + parts.file.size()) +
         10 * parts.fields.size();
}

size_t writeJsonObject(const JsonLineParts& parts, char* out) {
  JsonWriter w(out);
  w.timestamp(parts.second, parts.micro);
  w.literal(",\"log.level\":\"");
  w.raw(levelName(parts.level));
  w.literal("\",\"process.thread.id\":");
  w.integer(parts.tid);
  if (!parts.function.empty()) {
    w.literal(",\"log.origin.function\":");
    w.string(parts.function);
  }
  // The message, the file, then the fields, read and written in one pass.
  // A run that does not read back whole (a value the line's end cut) is
  // read again as a text line's would be, what precedes the fields read
  // staying with the message.
  thread_local std::string scratch;  // kept: no allocation per quoted value
  char* const messageAt = w.end();
  auto writeMessageAndFile = [&](std::string_view kept) {
    w.literal(",\"message\":\"");
    w.escaped(parts.message);
    w.escaped(kept);
    w.put('"');
    if (!parts.file.empty()) {
      w.literal(",\"log.origin.file.name\":");
      w.string(parts.file);
      w.literal(",\"log.origin.file.line\":");
      w.integer(parts.line);
    }
  };
  writeMessageAndFile(std::string_view());
  const std::string_view run = parts.fields;
  if (!w.writtenFields(run, &scratch)) {
    w.rewind(messageAt);
    thread_local std::vector<LogfmtField> fields;  // kept: no allocation per line
    fields.clear();
    const size_t begin = readLogfmtFields(run, [](const LogfmtField& f) { fields.push_back(f); });
    writeMessageAndFile(
        run.substr(0, begin < run.size() && begin > 0 && run[begin - 1] == ' ' ? begin - 1 : begin));
    for (const LogfmtField& f : fields) w.field(f, &scratch);
  }
  w.literal("}\n");
  return static_cast<size_t>(w.end() - out);
}

void appendJsonObject(const JsonLineParts& parts, std::string* out) {
  const size_t old = out->size();
  out->resize(old + jsonObjectCapacity(parts));
  const size_t n = writeJsonObject(parts, out->data() + old);
  out->resize(old + n);
}

void appendJsonMessage(std::string_view line, std::string* out) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  out->append("{\"message\":", 11);
  appendJsonString(line, out);
  out->append("}\n", 2);
}

JsonLineParts jsonPartsOf(const LineParts& parsed, Timestamp time) {
  JsonLineParts parts;
  parts.second = time.secondsSinceEpoch();
  parts.micro = time.microSecondsInSecond();
  parts.level = parsed.level;
  parts.tid = parsed.tid;
  parts.function = parsed.function;
  parts.message = parsed.message;
  parts.file = parsed.file;
  parts.line = parsed.line;
  return parts;
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
    appendJsonMessage(line, out);
    return;
  }
  JsonLineParts parts = jsonPartsOf(parsed, time);
  if (fields == FieldsInText::kRead) {
    const size_t begin = readLogfmtFields(parsed.message, [](const LogfmtField&) {});
    if (begin < parsed.message.size()) {
      // The space before the first field goes with the fields, as a stream writes them.
      const size_t from = begin > 0 ? begin - 1 : 0;
      parts.message = parsed.message.substr(0, from);
      parts.fields = parsed.message.substr(from);
    }
  }
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
