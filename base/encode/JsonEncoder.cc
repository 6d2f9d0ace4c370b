#include "muon/base/internal/LineEncoders.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "muon/base/JsonLines.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/internal/OperandReplay.h"
#include "muon/base/Logfmt.h"
#include "muon/base/TimeZone.h"

namespace muon {
namespace detail {

namespace {

// The levels' names' lengths (LineLayout.h's levelName()).
constexpr size_t kLevelLengths[kLevelCount] = {5, 5, 4, 4, 5, 5};
static_assert(levelName(0).size() == kLevelLengths[0] && levelName(2).size() == kLevelLengths[2] &&
                  levelName(3).size() == kLevelLengths[3] && levelName(5).size() == kLevelLengths[5],
              "");

// The ECS keys a line's own parts take; a field never overwrites them.
constexpr std::string_view kReservedKeys[] = {
    "@timestamp",         "log.level",           "process.thread.id",   "log.origin.function",
    "message",            "log.origin.file.name", "log.origin.file.line",
};

// Whether `name` is `key`, or a dotted prefix ("log", "log.origin") or
// extension ("message.x") of it: a reader that expands dotted names would
// see them clash.
bool clashes(std::string_view name, std::string_view key) {
  const size_t n = name.size() < key.size() ? name.size() : key.size();
  // Byte by byte: a name that clashes with none differs within a byte or
  // two, where a call to memcmp would cost more than the compare.
  for (size_t i = 0; i < n; ++i) {
    if (name[i] != key[i]) return false;
  }
  if (name.size() == key.size()) return true;
  return name.size() < key.size() ? key[n] == '.' : name[n] == '.';
}

bool isReserved(std::string_view name) {
  // Only the keys that start as `name` does are compared: most names start
  // as none does and are passed at once.
  if (name.empty()) return false;
  switch (name[0]) {
    case '@':
      return clashes(name, kReservedKeys[0]);
    case 'm':
      return clashes(name, kReservedKeys[4]);
    case 'p':
      return clashes(name, kReservedKeys[2]);
    case 'l':
      return clashes(name, kReservedKeys[1]) || clashes(name, kReservedKeys[3]) ||
             clashes(name, kReservedKeys[5]) || clashes(name, kReservedKeys[6]);
    default:
      return false;
  }
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

// A bare value that JSON takes as it is: a finite number, true or false.
bool readsAsJsonValue(std::string_view v) {
  if (v.empty()) return false;
  const char c = v[0];
  if ((c >= '0' && c <= '9') || c == '-') return isFiniteNumber(v);
  return (c == 't' && v == "true") || (c == 'f' && v == "false");
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
  // A constant's bytes: a copy of a size known at compile time.
  template <size_t N>
  void literal(const char (&s)[N]) {
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
  }
  void put(char c) { *p_++ = c; }
  // Moves the end past n bytes written at end() by someone else.
  void advance(size_t n) { p_ += n; }
  void integer(long long v) { p_ += convertDecimal(p_, v); }
  void string(std::string_view bytes) {
    put('"');
    escaped(bytes);
    put('"');
  }
  // A string whose bytes need no escape (the caller knows): quoted as they are.
  void plainString(std::string_view bytes) {
    put('"');
    raw(bytes);
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

  // {"@timestamp":"2026-11-21T08:15:02.123456Z"
  void timestamp(int64_t second, int micro) {
    literal("{\"@timestamp\":\"");
    p_ += writeUtcSecond(p_, second);
    writeMicro(p_, micro);
    p_ += 6;
    literal("Z\"");
  }

  // A field: its key (under "fields." if reserved; a name holds only
  // [A-Za-z0-9_.-], nothing to escape) and its value, typed as JsonLines.h
  // says. `scratch` holds a quoted value's bytes.
  void field(const LogField& f, std::string* scratch) {
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
    } else if (readsAsJsonValue(f.value)) {
      raw(f.value);
    } else {
      string(f.value);  // a bare value is its own bytes
    }
  }

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

size_t jsonCapacity(const LogRecord& record) {
  // Each byte of text 6 bytes at most (\u00XX); a field of n >= 4 bytes
  // (" a=1") adds at most `,"fields.":` and its quotes: 13 <= 3.25 n.
  return kJsonObjectOverhead +
         6 * (record.function.size() + record.message.size() + record.file.size()) +
         10 * record.fields.size();
}

size_t encodeJson(const LogRecord& record, char* out) {
  JsonWriter w(out);
  w.timestamp(record.time.secondsSinceEpoch(), record.time.microSecondsInSecond());
  w.literal(",\"log.level\":\"");
  const int level = record.level < kLevelCount ? record.level : kLevelCount - 1;
  w.raw(kLevelNames[level], kLevelLengths[level]);
  w.literal("\",\"process.thread.id\":");
  w.integer(record.tid);
  if (!record.function.empty()) {
    w.literal(",\"log.origin.function\":");
    w.string(record.function);
  }
  thread_local std::string scratch;  // kept: no allocation per quoted value
  auto messageAndFile = [&](const MessageAndFields& m) {
    w.literal(",\"message\":\"");
    w.escaped(m.message);
    w.escaped(m.kept);
    w.put('"');
    if (!record.file.empty()) {
      w.literal(",\"log.origin.file.name\":");
      w.string(record.file);
      w.literal(",\"log.origin.file.line\":");
      w.integer(record.line);
    }
  };
  messageThenFields(record, messageAndFile, [&](const LogField& f) { w.field(f, &scratch); });
  w.literal("}\n");
  return static_cast<size_t>(w.end() - out);
}

namespace {

// The field operands that end an OperandLine, each a kFieldOne start and its
// one value, as encodeJson writes fields; false where they are anything
// else (then the caller takes the text route).
bool writeOperandFields(const char* p, const char* end, LogStream& stream, JsonWriter& w) {
  while (p < end) {
    const auto tag = static_cast<uint8_t>(*p);
    if (tag != kOperandFieldOneText && tag != kOperandFieldOneBare) return false;
    if (static_cast<size_t>(end - p) < kOperandBytesHeader) return false;
    const size_t nameLength = loadOperand<uint16_t>(p + 1);
    const char* name = p + kOperandBytesHeader;
    p = name + nameLength;
    if (p >= end) return false;
    const std::string_view key(name, nameLength);
    if (!isFieldName(key)) return false;  // the text route writes it otherwise
    if (isReserved(key)) {
      w.literal(",\"fields.");
    } else {
      w.literal(",\"");
    }
    w.raw(key);
    w.literal("\":");
    const auto valueTag = static_cast<uint8_t>(*p);
    const bool bare = tag == kOperandFieldOneBare;
    if (bare && isNumberTag(valueTag)) {
      // Its text as the line's: written in place, where JSON takes it as
      // it is: an integer always, a float when it is finite (std::to_chars
      // and the short cut before it write a finite one in JSON's grammar).
      const char* const value = p + 1;
      LogStream::Buffer& buf = stream.buffer();
      buf.redirect(w.end());
      p = OperandReplay::plain(p, end, stream);
      if (p == nullptr) return false;
      if ((valueTag == kOperandF64 && !std::isfinite(loadOperand<double>(value))) ||
          (valueTag == kOperandF32 && !std::isfinite(loadOperand<float>(value)))) {
        return false;
      }
      w.advance(buf.length());
      continue;
    }
    if (valueTag != kOperandText && valueTag != kOperandRaw && valueTag != kOperandWhole) {
      return false;
    }
    if (static_cast<size_t>(end - p) < kOperandBytesHeader) return false;
    const size_t n = loadOperand<uint16_t>(p + 1);
    const char* bytes = p + kOperandBytesHeader;
    if (static_cast<size_t>(end - bytes) < n) return false;
    p = bytes + n;
    // Bytes the line's logfmt form would quote or escape are left to it.
    if (cleanRunLength(reinterpret_cast<const unsigned char*>(bytes), n) != n) return false;
    const std::string_view value(bytes, n);
    if (bare && readsAsJsonValue(value)) {
      w.raw(value);
    } else {
      w.plainString(value);
    }
  }
  return true;
}

}  // namespace

static_assert(SourceLocation::kCapacity <= 96, "kMaxJsonOfOperands counts a file of 96 bytes");

size_t encodeJsonOfOperands(const OperandLine& line, char* out) {
  if (line.level <= 1 || line.length > kMaxOperandsOfJson) return 0;  // TRACE, DEBUG: a function
  JsonWriter w(out);
  w.timestamp(line.second, line.micro);
  w.literal(",\"log.level\":\"");
  const int level = line.level < kLevelCount ? line.level : kLevelCount - 1;
  w.raw(kLevelNames[level], kLevelLengths[level]);
  w.literal("\",\"process.thread.id\":");
  std::string_view tid = line.tidText;
  while (!tid.empty() && tid.front() == ' ') tid.remove_prefix(1);
  while (!tid.empty() && tid.back() == ' ') tid.remove_suffix(1);
  if (!tid.empty()) {
    w.raw(tid);
  } else {
    w.integer(line.tid);
  }
  w.literal(",\"message\":\"");
  // The message: its operands up to the first field, as the text line
  // writes them, in place; JSON takes them as they are if they hold no
  // byte it escapes. Their bytes are looked at where the statement stored
  // them, not in the line just written: a wide load of bytes still in the
  // core's store buffer waits for them to reach the cache. Numbers are
  // written in digits, signs, '.', 'e', "inf", "nan" or "0x": never a byte
  // to escape; text that holds none is written as it is.
  const char* p = line.operands;
  const char* const end = p + line.length;
  LogStream stream;
  LogStream::Buffer& buf = stream.buffer();
  buf.redirect(w.end());
  bool clean = true;
  while (p < end) {
    const auto tag = static_cast<uint8_t>(*p);
    if (tag >= kOperandFieldText) break;
    const char* const operand = p;
    p = OperandReplay::plain(p, end, stream);
    if (p == nullptr) return 0;
    if (tag == kOperandText || tag == kOperandRaw || tag == kOperandWhole) {
      const size_t n = static_cast<size_t>(p - operand) - kOperandBytesHeader;
      clean &= cleanRunLength(reinterpret_cast<const unsigned char*>(operand) +
                                  kOperandBytesHeader, n) == n;
    } else if (tag == kOperandChar) {
      clean &= kEscape.kind[static_cast<unsigned char>(operand[1])] == 0;
    }
  }
  if (!clean) return 0;
  w.advance(buf.length());
  w.put('"');
  const SourceLocation& where = *line.where;
  if (where.fileLength > 0) {
    // The site's own bytes, which encodeJson would write from the record's
    // file and line: the name as it is where it needs no escape, the digits
    // the trailer holds.
    const std::string_view file(where.trailer + SourceLocation::kFileOffset, where.fileLength);
    w.literal(",\"log.origin.file.name\":");
    if (where.fileIsPlainJson) {
      w.plainString(file);
    } else {
      w.string(file);
    }
    w.literal(",\"log.origin.file.line\":");
    w.raw(where.lineDigits());
  }
  if (!writeOperandFields(p, end, stream, w)) return 0;
  w.literal("}\n");
  return static_cast<size_t>(w.end() - out);
}

}  // namespace detail
}  // namespace muon
