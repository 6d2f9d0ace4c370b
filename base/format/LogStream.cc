#include "muon/base/LogStream.h"

#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace muon {

std::atomic<bool> LogStream::rawControl_{false};

void LogStream::appendEscaped(const char* data, size_t len) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < len; ++i) {
    unsigned char c = static_cast<unsigned char>(data[i]);
    char esc[4];
    size_t n = 1;
    if ((c >= 0x20 && c != 0x7f) || c == '\t') {
      esc[0] = static_cast<char>(c);
    } else if (c == '\n' || c == '\r') {
      esc[0] = '\\';
      esc[1] = c == '\n' ? 'n' : 'r';
      n = 2;
    } else {
      esc[0] = '\\';
      esc[1] = 'x';
      esc[2] = kHex[c >> 4];
      esc[3] = kHex[c & 0xf];
      n = 4;
    }
    // An escape is written whole or not at all, like a number; the message
    // ends where one does not fit.
    if (n > buffer_.avail()) {
      cutHere();
      return;
    }
    buffer_.append(esc, n);
  }
}

void LogStream::integerNearEnd(long long v) {
  char tmp[kMaxNumericSize];
  appendWhole(tmp, detail::convertDecimal(tmp, v));
}

void LogStream::integerNearEnd(unsigned long long v) {
  char tmp[kMaxNumericSize];
  appendWhole(tmp, detail::convertDecimal(tmp, v));
}

void LogStream::putPastEnd(const char* data, size_t len, bool whole) {
  if (fieldDepth_ == 0 || fieldDropped_) {
    cutHere();
    return;
  }
  const size_t room = fieldRoom();
  const size_t n = len <= room ? len : (whole ? 0 : room);
  std::memcpy(buffer_.current(), data, n);
  buffer_.add(n);
  wrotePastEnd();
  if (n < len) cutHere();
}

bool LogStream::finishLine(const char* trailer, size_t n) {
  const bool cut = limit_ == Limit::kCut;
  // The room kept for them is there unless the buffer was written past
  // this stream (a caller's own bytes): then the line's end gives way.
  const size_t need = n + (cut ? kCutMarker.size() : 0);
  if (buffer_.room() < need) buffer_.unwind(std::min(buffer_.length(), need - buffer_.room()));
  if (cut) {
    const auto at = here();
    noteFieldBegins(at);
    std::memcpy(buffer_.current(), kCutMarker.data(), kCutMarker.size());
    buffer_.add(kCutMarker.size());
    fieldsEnd_ = here();
    // A cut line's fields may have lost bytes: readers take its run apart.
    if (spans_ != nullptr) spans_->complete = false;
  }
  std::memcpy(buffer_.current(), trailer, std::min(n, buffer_.room()));
  buffer_.add(std::min(n, buffer_.room()));
  buffer_.pin();
  return cut;
}
void LogStream::beginFieldTextChecked(std::string_view name, bool text) {
  if (fieldDepth_++ > 0) return;  // inside another field's value
  noteFieldBegins(here());
  fieldText_ = text;
  // Past the message's end, in the room kept for fields.
  const bool past = buffer_.avail() < 2 + detail::kMaxFieldName;
  if (__builtin_expect(!past || fieldRoom() >= 2 + detail::kMaxFieldName, 1)) {
    char* p = buffer_.current();
    p[0] = ' ';
    size_t n = 1 + detail::writeFieldName(p + 1, name);
    p[n++] = '=';
    buffer_.add(n);
    if (past) wrotePastEnd();
  } else {
    // The line is full: the field is left out, and its value with it
    // (putPastEnd and endFieldText write none of it).
    fieldDropped_ = true;
    cutHere();
  }
  fieldStart_ = here();
}

void LogStream::endFieldText() {
  if (fieldDepth_ == 0 || --fieldDepth_ > 0) return;
  if (fieldDropped_) {
    // Nothing of it was written; not even an empty value's quotes.
    fieldDropped_ = false;
    return;
  }
  if (valueStaysAsItIs(false)) {
    noteFieldEnds(static_cast<uint16_t>(fieldStart_ - 1));
    return;
  }
  char* value = const_cast<char*>(buffer_.data()) + fieldStart_;
  const size_t len = buffer_.length() - fieldStart_;
  // A quoted value may grow into the room kept for fields, and stops short
  // of the room kept for the cut marker and the trailer.
  bool cut = false;
  const size_t encoded = detail::encodeLogfmtValue(value, len, len + fieldRoom(), fieldText_, &cut);
  buffer_.unwind(len);
  const bool past = encoded > buffer_.avail();
  buffer_.add(encoded);
  if (past || limit_ != Limit::kMessage) wrotePastEnd();
  if (cut) cutHere();
  noteFieldEnds(static_cast<uint16_t>(fieldStart_ - 1));
}

namespace detail {

namespace {
// Digits two per table look-up, a value split into halves of four (and
// eight) digits so that the divisions of the halves run side by side rather
// than one after another, and no count of the digits before writing them.

// v < 10^4 as exactly four digits (leading zeros kept).
void writeFourDigits(char* p, uint32_t v) {
  const uint32_t hi = v / 100;
  writeTwoDigits(p, hi);
  writeTwoDigits(p + 2, v - hi * 100);
}

// v < 10^8 as exactly eight digits.
void writeEightDigits(char* p, uint32_t v) {
  const uint32_t hi = v / 10000;
  writeFourDigits(p, hi);
  writeFourDigits(p + 4, v - hi * 10000);
}

// v < 10^4 without leading zeros; its length.
__attribute__((always_inline)) inline size_t writeUpToFourDigits(char* p, uint32_t v) {
  if (v < 100) {
    if (v < 10) {
      *p = static_cast<char>('0' + v);
      return 1;
    }
    writeTwoDigits(p, v);
    return 2;
  }
  const uint32_t hi = v / 100;
  const uint32_t lo = v - hi * 100;
  if (hi < 10) {
    *p = static_cast<char>('0' + hi);
    writeTwoDigits(p + 1, lo);
    return 3;
  }
  writeTwoDigits(p, hi);
  writeTwoDigits(p + 2, lo);
  return 4;
}

size_t convertUint32(char* buf, uint32_t v) {
  if (v < 10000) return writeUpToFourDigits(buf, v);
  if (v < 100000000) {
    const uint32_t hi = v / 10000;
    const size_t n = writeUpToFourDigits(buf, hi);
    writeFourDigits(buf + n, v - hi * 10000);
    return n + 4;
  }
  const uint32_t hi = v / 100000000;  // under 43
  const size_t n = writeUpToFourDigits(buf, hi);
  writeEightDigits(buf + n, v - hi * 100000000);
  return n + 8;
}

size_t convertUnsignedTo(char* buf, unsigned long long v) {
  if (v <= UINT32_MAX) return convertUint32(buf, static_cast<uint32_t>(v));
  // Over 10^9: the last eight digits apart, the rest (under 1.9 * 10^11)
  // before them, itself split once more past 32 bits.
  const unsigned long long hi = v / 100000000;
  const size_t n = convertUnsignedTo(buf, hi);
  writeEightDigits(buf + n, static_cast<uint32_t>(v - hi * 100000000));
  return n + 8;
}
}  // namespace

void copyLongBytes(char* to, const char* from, size_t len) { std::memcpy(to, from, len); }

size_t convertDecimal(char* buf, unsigned long long v) { return convertUnsignedTo(buf, v); }

size_t convertDecimal(char* buf, long long v) {
  if (v >= 0) return convertUnsignedTo(buf, static_cast<unsigned long long>(v));
  // Negate in unsigned arithmetic: exact for LLONG_MIN, whose magnitude
  // does not fit in a long long.
  buf[0] = '-';
  return 1 + convertUnsignedTo(buf + 1, 0ULL - static_cast<unsigned long long>(v));
}

size_t convertHex(char* buf, unsigned long long v) {
  static constexpr char kHex[] = "0123456789abcdef";
  char tmp[16];
  char* p = tmp + sizeof tmp;
  do {
    *--p = kHex[v & 15];
    v >>= 4;
  } while (v != 0);
  size_t n = static_cast<size_t>(tmp + sizeof tmp - p);
  buf[0] = '0';
  buf[1] = 'x';
  std::memcpy(buf + 2, p, n);
  return n + 2;
}

namespace {
template <typename T>
size_t formatFloating(char* buf, T v) {
  auto result = std::to_chars(buf, buf + kMaxFloatingSize, v);
  return static_cast<size_t>(result.ptr - buf);
}
}  // namespace

size_t convertFloat(char* buf, float v) { return formatFloating(buf, v); }

}  // namespace detail

LogStream& LogStream::formatFloat(float v) {
  char tmp[kMaxNumericSize];
  return appendWhole(tmp, detail::convertFloat(tmp, v));
}

namespace detail {

size_t convertShortDouble(char* buf, double v) {
  static constexpr double kPowersOf10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                           1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};
  // Also false for NaN; zero has a sign to keep.
  if (!(v > -1e15 && v < 1e15) || v == 0) return 0;
  const bool negative = v < 0;
  const double a = negative ? -v : v;
  if (a < 1e-3) return 0;
  for (unsigned k = 0; k < sizeof kPowersOf10 / sizeof kPowersOf10[0]; ++k) {
    const double scaled = a * kPowersOf10[k];
    if (scaled >= 9007199254740992.0) return 0;  // 2^53: no longer exact
    // To the nearest integer as nearbyint does in the default rounding mode
    // (ties to even), without its call: below 2^52, adding 2^52 leaves no
    // bits for a fraction, so the sum is rounded there; from 2^52 on a double
    // is an integer already.
    constexpr double kTwo52 = 4503599627370496.0;
    const double r = scaled < kTwo52 ? (scaled + kTwo52) - kTwo52 : scaled;
    // r and 10^k are exact, so the quotient is correctly rounded: the
    // decimal r / 10^k reads back as a. The first k that works gives the
    // fewest digits.
    if (r / kPowersOf10[k] != a) continue;
    char digits[20];
    const auto n = static_cast<unsigned>(convertDecimal(digits, static_cast<unsigned long long>(r)));
    // Fixed notation: "ddd", "ddd.ddd" or "0.000ddd".
    const unsigned fixedLength = k == 0 ? n : (n > k ? n + 1 : 2 + k);
    // Scientific, as to_chars would write it: the significant digits
    // (without an integer's trailing zeros), '.', "e+XX".
    unsigned significant = n;
    if (k == 0) {
      while (significant > 1 && digits[significant - 1] == '0') --significant;
    }
    const int exponent = static_cast<int>(n) - static_cast<int>(k) - 1;
    const unsigned scientificLength =
        significant + (significant > 1 ? 1 : 0) + 2 + (exponent >= 100 || exponent <= -100 ? 3 : 2);
    if (scientificLength < fixedLength) return 0;  // to_chars writes that one
    char* p = buf;
    if (negative) *p++ = '-';
    if (k == 0) {
      std::memcpy(p, digits, n);
      p += n;
    } else if (n > k) {
      std::memcpy(p, digits, n - k);
      p += n - k;
      *p++ = '.';
      std::memcpy(p, digits + n - k, k);
      p += k;
    } else {
      *p++ = '0';
      *p++ = '.';
      for (unsigned i = n; i < k; ++i) *p++ = '0';
      std::memcpy(p, digits, n);
      p += n;
    }
    return static_cast<size_t>(p - buf);
  }
  return 0;
}

size_t convertDouble(char* buf, double v) {
  const size_t n = convertShortDouble(buf, v);
  return n != 0 ? n : formatFloating(buf, v);
}

}  // namespace detail

LogStream& LogStream::formatDouble(double v) {
  char tmp[kMaxNumericSize];
  return appendWhole(tmp, detail::convertDouble(tmp, v));
}

LogStream& LogStream::formatPointer(const void* p) {
  char tmp[kMaxNumericSize];
  return appendWhole(tmp, detail::convertHex(tmp, reinterpret_cast<uintptr_t>(p)));
}

void LogStream::fallBackToText() {
  char recorded[kBufferSize];
  const size_t n = buffer_.length() - recordedFrom_;
  std::memcpy(recorded, buffer_.data() + recordedFrom_, n);
  buffer_.unwind(n);
  buffer_.moveToOwnStorage();
  recording_ = false;
  if (fallback_ != nullptr) fallback_(fallbackContext_, *this);
  detail::replayOperands(recorded, n, *this);
}

Fmt::Fmt(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int n = std::vsnprintf(buf_, sizeof buf_, fmt, args);
  va_end(args);
  // vsnprintf reports the untruncated length; keep what is really in buf_.
  if (n < 0) n = 0;
  length_ = static_cast<size_t>(n) < sizeof buf_ ? static_cast<size_t>(n) : sizeof buf_ - 1;
}

}  // namespace muon
