#include "muon/base/Logfmt.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstdint>
#include <cstring>

namespace muon {
namespace detail {

namespace {

// The bytes c takes inside quotes.
size_t escapedLength(unsigned char c) {
  if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t') return 2;
  return isControlByte(c) ? 6 : 1;
}

// Writes c's quoted form so that it ends at `end`; returns its start.
char* writeEscapedBackward(char* end, unsigned char c) {
  switch (c) {
    case '"':
    case '\\':
      end[-1] = static_cast<char>(c);
      end[-2] = '\\';
      return end - 2;
    case '\n':
    case '\r':
    case '\t':
      end[-1] = c == '\n' ? 'n' : (c == '\r' ? 'r' : 't');
      end[-2] = '\\';
      return end - 2;
    default:
      break;
  }
  if (!isControlByte(c)) {
    end[-1] = static_cast<char>(c);
    return end - 1;
  }
  writeUnicodeEscape(end - 6, c);
  return end - 6;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }


// The length of a quoted value at s[i] == '"' (quotes included), 0 if it is
// not closed or holds an escape the encoder does not write.
size_t quotedLength(std::string_view s, size_t i) {
  size_t j = i + 1;
  while (j < s.size()) {
    const char c = s[j];
    if (c == '"') return j + 1 - i;
    if (isControlByte(static_cast<unsigned char>(c))) return 0;
    if (c != '\\') {
      ++j;
      continue;
    }
    if (j + 1 >= s.size()) return 0;
    const char e = s[j + 1];
    if (e == '"' || e == '\\' || e == 'n' || e == 'r' || e == 't') {
      j += 2;
    } else if (e == 'u' && j + 5 < s.size() && hexValue(s[j + 2]) >= 0 &&
               hexValue(s[j + 3]) >= 0 && hexValue(s[j + 4]) >= 0 && hexValue(s[j + 5]) >= 0) {
      j += 6;
    } else {
      return 0;
    }
  }
  return 0;
}

}  // namespace

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void appendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

size_t writeFieldName(char* p, std::string_view name) {
  if (name.empty()) {
    *p = '_';
    return 1;
  }
  const size_t n = name.size() < kMaxFieldName ? name.size() : kMaxFieldName;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    p[i] = (kLogfmtBytes.of[c] & kNameByte) != 0 ? static_cast<char>(c) : '_';
  }
  return n;
}

bool readsAsNumberOrBool(std::string_view v) {
  if (v == "true" || v == "false") return true;
  size_t i = 0;
  if (i < v.size() && v[i] == '-') ++i;
  if (i >= v.size() || !isDigit(v[i])) return false;
  if (v[i] == '0') {
    ++i;
  } else {
    while (i < v.size() && isDigit(v[i])) ++i;
  }
  if (i < v.size() && v[i] == '.') {
    ++i;
    if (i >= v.size() || !isDigit(v[i])) return false;
    while (i < v.size() && isDigit(v[i])) ++i;
  }
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (i >= v.size() || !isDigit(v[i])) return false;
    while (i < v.size() && isDigit(v[i])) ++i;
  }
  return i == v.size();
}

size_t encodeLogfmtValue(char* p, size_t len, size_t room, bool text, bool* cut) {
  unsigned special = len == 0 ? kQuotedByte : 0;
  for (size_t i = 0; i < len; ++i) special |= kLogfmtBytes.of[static_cast<unsigned char>(p[i])];
  bool quote = (special & kQuotedByte) != 0;
  // Only text that starts as a number or a bool can read as one.
  if (!quote && text && mayReadAsNumberOrBool(p[0])) {
    quote = readsAsNumberOrBool(std::string_view(p, len));
  }
  if (!quote) return len;
  if (room < 2) {  // not even the quotes: the value goes
    if (cut != nullptr) *cut = true;
    return 0;
  }
  size_t quotedLen = 2;
  for (size_t i = 0; i < len; ++i) quotedLen += escapedLength(static_cast<unsigned char>(p[i]));
  // Cut from the end until the quoted form fits.
  size_t keep = len;
  while (quotedLen > room) quotedLen -= escapedLength(static_cast<unsigned char>(p[--keep]));
  if (cut != nullptr && keep < len) *cut = true;
  // Backward, so that each byte is read before its place is written: byte
  // i's quoted form starts after the opening quote, at or past i + 1.
  char* end = p + quotedLen;
  *--end = '"';
  for (size_t i = keep; i > 0; --i) end = writeEscapedBackward(end, static_cast<unsigned char>(p[i - 1]));
  *--end = '"';
  return quotedLen;
}

namespace {

// The length of the run of bytes at p (n of them) that a quoted value holds
// as they are: all but '"', '\\', control characters and DEL. Sixteen at a
// time with SSE2 (every x86-64 has it), the rest one at a time.
size_t quotedRunLength(const char* p, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i lastControl = _mm_set1_epi8(0x1f);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, lastControl), v),
                     _mm_cmpeq_epi8(v, _mm_set1_epi8('"'))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (; i < n; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (escapedLength(c) != 1) break;
  }
  return i;
}

}  // namespace

size_t writeLogfmtValue(char* out, const char* p, size_t len, bool text) {
  // Quoted as encodeLogfmtValue quotes; the first byte that asks for it ends
  // the scan (a message's first space, mostly).
  bool quote = len == 0;
  if (!quote && mayNeedQuotes(p, len)) {  // a word at a time; then exactly
    for (size_t i = 0; i < len && !quote; ++i) {
      quote = (kLogfmtBytes.of[static_cast<unsigned char>(p[i])] & kQuotedByte) != 0;
    }
  }
  if (!quote && text && mayReadAsNumberOrBool(p[0])) {
    quote = readsAsNumberOrBool(std::string_view(p, len));
  }
  if (!quote) {
    if (len > 0) std::memcpy(out, p, len);
    return len;
  }
  char* o = out;
  *o++ = '"';
  size_t i = 0;
  while (i < len) {
    const size_t run = quotedRunLength(p + i, len - i);
    std::memcpy(o, p + i, run);
    o += run;
    i += run;
    if (i == len) break;
    const auto c = static_cast<unsigned char>(p[i++]);
    const size_t n = escapedLength(c);
    writeEscapedBackward(o + n, c);
    o += n;
  }
  *o++ = '"';
  return static_cast<size_t>(o - out);
}

size_t logfmtTokenAt(std::string_view s, size_t i, LogfmtField* field) {
  size_t j = i;
  while (j < s.size() && j - i < kMaxFieldName && isFieldNameByte(s[j])) ++j;
  if (j == i || j >= s.size() || s[j] != '=') return 0;
  field->name = s.substr(i, j - i);
  const size_t v = j + 1;
  size_t n;
  if (v < s.size() && s[v] == '"') {
    n = quotedLength(s, v);
    if (n == 0) return 0;
    field->quoted = true;
  } else {
    size_t k = v;
    while (k < s.size()) {
      const auto c = static_cast<unsigned char>(s[k]);
      if (c == ' ' || c == '"' || c == '=' || c == '\\' || isControlByte(c)) break;
      ++k;
    }
    n = k - v;
    if (n == 0) return 0;
    field->quoted = false;
  }
  if (v + n < s.size() && s[v + n] != ' ') return 0;
  field->value = s.substr(v, n);
  return v + n - i;
}

void appendLogfmtValue(const LogfmtField& field, std::string* out) {
  if (!field.quoted) {
    out->append(field.value);
    return;
  }
  const std::string_view q = field.value.substr(1, field.value.size() - 2);
  for (size_t i = 0; i < q.size(); ++i) {
    if (q[i] != '\\') {
      out->push_back(q[i]);
      continue;
    }
    const char e = q[++i];
    if (e == 'u') {
      // \u00XX is what the encoder writes; anything above one byte is
      // written as UTF-8.
      unsigned cp = 0;
      for (size_t k = 1; k <= 4; ++k) cp = cp * 16 + static_cast<unsigned>(hexValue(q[i + k]));
      i += 4;
      appendUtf8(cp, out);
    } else {
      out->push_back(unescapedByte(e));  // quotedLength let only \" \\ \n \r \t through
    }
  }
}

}  // namespace detail
}  // namespace muon
