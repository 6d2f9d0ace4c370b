#include "muon/base/LogStream.h"

#include <charconv>
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
    // An escape is written whole or not at all, like a number.
    if (n > buffer_.avail()) return;
    buffer_.append(esc, n);
  }
}
namespace detail {

namespace {
// Writes v backwards ending at `end`, two digits per table look-up, in
// 32-bit arithmetic once the value fits (cheaper divisions by 100).
void writeDigitsBackward(char* end, unsigned long long v) {
  while (v > UINT32_MAX) {
    const unsigned long long q = v / 100;
    end -= 2;
    writeTwoDigits(end, static_cast<unsigned>(v - q * 100));
    v = q;
  }
  auto w = static_cast<uint32_t>(v);
  while (w >= 100) {
    const uint32_t q = w / 100;
    end -= 2;
    writeTwoDigits(end, w - q * 100);
    w = q;
  }
  if (w >= 10) {
    writeTwoDigits(end - 2, w);
  } else {
    end[-1] = static_cast<char>('0' + w);
  }
}

// Decimal digits in v (1 for 0), from its bit length: log10(2) is about
// 1233/4096, which gives the count or one more; one compare decides.
size_t countDigits(unsigned long long v) {
  static constexpr unsigned long long kPowersOf10[20] = {
      1ull,          10ull,          100ull,          1000ull,          10000ull,
      100000ull,     1000000ull,     10000000ull,     100000000ull,     1000000000ull,
      10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull,
      1000000000000000ull, 10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
      10000000000000000000ull};
  const unsigned long long x = v | 1;  // 0 has one digit, as 1 does
  const unsigned bits = 64 - static_cast<unsigned>(__builtin_clzll(x));
  const unsigned t = bits * 1233 >> 12;
  return t + (x >= kPowersOf10[t] ? 1 : 0);
}

// Counting first lets the digits go straight to their place: no scratch
// buffer and no copy.
size_t convertUnsignedTo(char* buf, unsigned long long v) {
  size_t n = countDigits(v);
  writeDigitsBackward(buf + n, v);
  return n;
}
}  // namespace

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

}  // namespace detail

namespace {
template <typename T>
size_t formatFloating(char* buf, size_t size, T v) {
  auto result = std::to_chars(buf, buf + size, v);
  return static_cast<size_t>(result.ptr - buf);
}
}  // namespace

LogStream& LogStream::formatFloat(float v) {
  char tmp[kMaxNumericSize];
  return appendWhole(tmp, formatFloating(tmp, sizeof tmp, v));
}

LogStream& LogStream::formatDouble(double v) {
  char tmp[kMaxNumericSize];
  return appendWhole(tmp, formatFloating(tmp, sizeof tmp, v));
}

LogStream& LogStream::formatPointer(const void* p) {
  char tmp[kMaxNumericSize];
  return appendWhole(tmp, detail::convertHex(tmp, reinterpret_cast<uintptr_t>(p)));
}

void LogStream::fallBackToText() {
  char recorded[kBufferSize];
  const size_t n = buffer_.length();
  std::memcpy(recorded, buffer_.data(), n);
  buffer_.useOwnStorage();
  recording_ = false;
  fallback_(fallbackContext_, *this);
  detail::replayOperands(recorded, n, *this);
}

LogStream& LogStream::recordedBytesDoNotFit(detail::OperandTag tag, const char* data, size_t len) {
  fallBackToText();
  switch (tag) {
    case detail::kOperandText:
      return appendText(data, len);
    case detail::kOperandWhole:
      return appendWhole(data, len);
    default:
      return append(data, len);
  }
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
