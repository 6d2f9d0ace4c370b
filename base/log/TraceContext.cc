#include "muon/base/TraceContext.h"

#include <algorithm>
#include <random>

namespace muon {

namespace {

constexpr char kHex[] = "0123456789abcdef";

bool isLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// `n` lower-case hex digits at p, not all '0'.
bool validId(const char* p, size_t n) {
  bool nonZero = false;
  for (size_t i = 0; i < n; ++i) {
    if (!isLowerHex(p[i])) return false;
    nonZero = nonZero || p[i] != '0';
  }
  return nonZero;
}

int hexValue(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

// Fills [p, p+n) with random hex digits, not all '0'.
void randomId(char* p, size_t n) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  do {
    for (size_t i = 0; i < n; i += 16) {
      uint64_t bits = random();
      for (size_t j = i; j < n && j < i + 16; ++j, bits >>= 4) p[j] = kHex[bits & 0xf];
    }
  } while (!validId(p, n));
}

}  // namespace

bool TraceContext::parse(std::string_view header, TraceContext* out) {
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!header.empty() && space(header.front())) header.remove_prefix(1);
  while (!header.empty() && space(header.back())) header.remove_suffix(1);
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
  constexpr size_t kLength = 55;
  if (header.size() < kLength) return false;
  const char* p = header.data();
  if (!isLowerHex(p[0]) || !isLowerHex(p[1]) || (p[0] == 'f' && p[1] == 'f')) return false;
  const bool version00 = p[0] == '0' && p[1] == '0';
  if (version00 ? header.size() != kLength : (header.size() > kLength && p[kLength] != '-')) {
    return false;
  }
  if (p[2] != '-' || p[35] != '-' || p[52] != '-') return false;
  if (!validId(p + 3, 32) || !validId(p + 36, 16)) return false;
  if (!isLowerHex(p[53]) || !isLowerHex(p[54])) return false;
  TraceContext t;
  std::copy(p + 3, p + 35, t.traceId_);
  std::copy(p + 36, p + 52, t.spanId_);
  t.flags_ = static_cast<uint8_t>(hexValue(p[53]) << 4 | hexValue(p[54]));
  *out = t;
  return true;
}

TraceContext TraceContext::newTrace(uint8_t flags) {
  TraceContext t;
  randomId(t.traceId_, sizeof t.traceId_);
  randomId(t.spanId_, sizeof t.spanId_);
  t.flags_ = flags;
  return t;
}

TraceContext TraceContext::child() const {
  TraceContext t = *this;
  randomId(t.spanId_, sizeof t.spanId_);
  return t;
}

std::string TraceContext::traceparent() const {
  std::string out = "00-";
  out.append(traceId());
  out += '-';
  out.append(spanId());
  out += '-';
  out += kHex[flags_ >> 4];
  out += kHex[flags_ & 0xf];
  return out;
}

}  // namespace muon
