#include "muon/base/LogStream.h"

#include "muon/base/internal/LogOperands.h"

#include <atomic>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

// Counts heap allocations, so a test can show that formatting never allocates.
namespace {
std::atomic<long> g_allocations{0};

void* countedAlloc(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) { return countedAlloc(n); }
void* operator new[](size_t n) { return countedAlloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace muon {
namespace {

constexpr size_t kCapacity = LogStream::kBufferSize;
// Where a message stops: the rest is kept for fields and the line's end.
constexpr size_t kMessageEnd = LogStream::kMessageEnd;

// "About 4 KB", and inside the object: a LogStream on the stack is the whole
// buffer.
static_assert(kCapacity >= 4000 && kCapacity <= 4096, "LogStream buffer should be about 4 KB");
static_assert(sizeof(LogStream) >= kCapacity && sizeof(LogStream) <= kCapacity + 64,
              "LogStream must hold its buffer inline");

std::string str(const LogStream& s) { return s.buffer().toString(); }

template <typename T>
std::string str(T v) {
  LogStream s;
  s << v;
  return str(s);
}

// ---- integers ----------------------------------------------------------------

template <typename T>
std::string referenceDecimal(T v) {
  char buf[32];
  if (std::is_signed<T>::value) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  }
  return buf;
}

template <typename T>
std::string toStdString(T v) {
  if (std::is_signed<T>::value) return std::to_string(static_cast<long long>(v));
  return std::to_string(static_cast<unsigned long long>(v));
}

// min, max, 0, -1, their neighbours, 10^k - 1, 10^k, 10^k + 1 (and their
// negatives): the values where a digit count changes; and powers of two.
template <typename T>
std::vector<T> edgeValues() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0), T(1), L::max(), T(L::max() - 1), L::min(), T(L::min() + 1)};
  if (std::is_signed<T>::value) v.push_back(static_cast<T>(-1));
  for (unsigned long long p = 10; p <= static_cast<unsigned long long>(L::max()); p *= 10) {
    v.push_back(static_cast<T>(p - 1));
    v.push_back(static_cast<T>(p));
    if (p < static_cast<unsigned long long>(L::max())) v.push_back(static_cast<T>(p + 1));
    if (std::is_signed<T>::value) {
      v.push_back(static_cast<T>(-static_cast<long long>(p - 1)));
      v.push_back(static_cast<T>(-static_cast<long long>(p)));
      v.push_back(static_cast<T>(-static_cast<long long>(p + 1)));
    }
    if (p > static_cast<unsigned long long>(L::max()) / 10) break;
  }
  // 2^k - 1 and 2^k: where the bit length changes (the digit count is
  // estimated from it) and, at 2^32, where the conversion narrows to 32 bits.
  for (int k = 1; k < L::digits; ++k) {
    const unsigned long long p = 1ull << k;
    v.push_back(static_cast<T>(p - 1));
    v.push_back(static_cast<T>(p));
  }
  return v;
}

template <typename T>
class IntegerTest : public ::testing::Test {};

// Every integer type there is: int8_t ... uint64_t, size_t, ptrdiff_t and
// intmax_t are names for these (listing them too only ran the same tests
// again, under the same ctest names).
using IntegerTypes =
    ::testing::Types<signed char, unsigned char, short, unsigned short, int, unsigned int, long,
                     unsigned long, long long, unsigned long long>;
static_assert(std::is_same_v<int8_t, signed char> && std::is_same_v<uint8_t, unsigned char> &&
                  std::is_same_v<int64_t, long> && std::is_same_v<uint64_t, unsigned long> &&
                  std::is_same_v<size_t, unsigned long> && std::is_same_v<ptrdiff_t, long> &&
                  std::is_same_v<intmax_t, long>,
              "LP64 Linux: the fixed-width names are the types above");
TYPED_TEST_SUITE(IntegerTest, IntegerTypes);

TYPED_TEST(IntegerTest, EdgeValuesMatchSnprintfAndToString) {
  for (TypeParam v : edgeValues<TypeParam>()) {
    const std::string got = str(v);
    EXPECT_EQ(got, referenceDecimal(v)) << +v;
    EXPECT_EQ(got, toStdString(v)) << +v;
  }
}

TYPED_TEST(IntegerTest, ChainedValuesAreWrittenInOrder) {
  using L = std::numeric_limits<TypeParam>;
  LogStream s;
  s << L::min() << ' ' << L::max() << ' ' << TypeParam(0);
  EXPECT_EQ(str(s), referenceDecimal(L::min()) + " " + referenceDecimal(L::max()) + " 0");
}

TEST(LogStreamTest, Int64MinIsExact) {
  EXPECT_EQ(str(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(str(std::numeric_limits<long long>::min()), "-9223372036854775808");
  EXPECT_EQ(str(std::numeric_limits<uint64_t>::max()), "18446744073709551615");
}

TEST(LogStreamTest, EverySixteenBitValue) {
  for (int i = std::numeric_limits<short>::min(); i <= std::numeric_limits<short>::max(); ++i) {
    ASSERT_EQ(str(static_cast<short>(i)), std::to_string(i));
  }
  for (int i = 0; i <= std::numeric_limits<unsigned short>::max(); ++i) {
    ASSERT_EQ(str(static_cast<unsigned short>(i)), std::to_string(i));
  }
}

TEST(LogStreamTest, PseudoRandomSixtyFourBitValues) {
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 100000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // Vary the magnitude too, so short numbers get as many checks as long ones.
    const uint64_t u = x >> (i % 64);
    ASSERT_EQ(str(u), std::to_string(u));
    const int64_t v = static_cast<int64_t>(u) * ((i & 1) ? -1 : 1);
    ASSERT_EQ(str(v), std::to_string(v));
  }
}

// int8_t and uint8_t are numbers; char is a character.
TEST(LogStreamTest, CharIsACharacterButInt8IsANumber) {
  EXPECT_EQ(str('A'), "A");
  EXPECT_EQ(str(static_cast<int8_t>(65)), "65");
  EXPECT_EQ(str(static_cast<uint8_t>(200)), "200");
  EXPECT_EQ(str(static_cast<signed char>(-128)), "-128");
  LogStream s;
  s << '\0';
  EXPECT_EQ(s.buffer().length(), 1u);
  EXPECT_EQ(s.buffer().data()[0], '\0');
}

TEST(LogStreamTest, BoolIsOneOrZero) {
  EXPECT_EQ(str(true), "1");
  EXPECT_EQ(str(false), "0");
}

// ---- floating point ----------------------------------------------------------

TEST(LogStreamTest, DoubleSpecialValues) {
  EXPECT_EQ(str(0.0), "0");
  EXPECT_EQ(str(-0.0), "-0");
  EXPECT_EQ(str(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(str(-std::numeric_limits<double>::quiet_NaN()), "-nan");
  EXPECT_EQ(str(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(str(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(LogStreamTest, DoubleIsShortestText) {
  EXPECT_EQ(str(0.1), "0.1");
  EXPECT_EQ(str(1.0), "1");
  EXPECT_EQ(str(-1.5), "-1.5");
  EXPECT_EQ(str(100.0), "100");
  EXPECT_EQ(str(0.001), "0.001");
  EXPECT_EQ(str(1e300), "1e+300");
  EXPECT_EQ(str(1e-7), "1e-07");
  EXPECT_EQ(str(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(str(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(str(std::numeric_limits<double>::min()), "2.2250738585072014e-308");
  EXPECT_EQ(str(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(str(std::numeric_limits<double>::lowest()), "-1.7976931348623157e+308");
}

TEST(LogStreamTest, FloatIsShortestFloatText) {
  // Printed as a float, not widened: 0.1f as a double is 0.10000000149011612.
  EXPECT_EQ(str(0.1f), "0.1");
  EXPECT_EQ(str(-0.0f), "-0");
  EXPECT_EQ(str(16777216.0f), "16777216");
  EXPECT_EQ(str(1e10f), "1e+10");
  EXPECT_EQ(str(std::numeric_limits<float>::max()), "3.4028235e+38");
  EXPECT_EQ(str(std::numeric_limits<float>::denorm_min()), "1e-45");
  EXPECT_EQ(str(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(str(std::numeric_limits<float>::quiet_NaN()), "nan");
}

uint64_t bitsOf(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Whatever is printed reads back as the very same value: edge cases, every
// denormal exponent, and random bit patterns.
TEST(LogStreamTest, DoubleRoundTripsThroughStrtod) {
  std::vector<double> values = {0.0,
                                -0.0,
                                0.1,
                                1.0 / 3,
                                2.0 / 3,
                                1e300,
                                -1e-300,
                                123456789.123456789,
                                9007199254740993.0,
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::epsilon()};
  for (double d = std::numeric_limits<double>::denorm_min(); d < 1e-300; d *= 3) values.push_back(d);
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 50000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double d;
    std::memcpy(&d, &x, sizeof d);
    if (!std::isnan(d) && !std::isinf(d)) values.push_back(d);
  }
  for (double d : values) {
    const std::string text = str(d);
    char* end = nullptr;
    const double back = std::strtod(text.c_str(), &end);
    ASSERT_EQ(*end, '\0') << text;
    ASSERT_EQ(bitsOf(back), bitsOf(d)) << text;
  }
}

TEST(LogStreamTest, FloatRoundTripsThroughStrtof) {
  uint32_t x = 2463534242u;
  for (int i = 0; i < 50000; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    float f;
    std::memcpy(&f, &x, sizeof f);
    if (std::isnan(f) || std::isinf(f)) continue;
    const std::string text = str(f);
    char* end = nullptr;
    const float back = std::strtof(text.c_str(), &end);
    ASSERT_EQ(*end, '\0') << text;
    ASSERT_EQ(bitsOf(back), bitsOf(f)) << text;
  }
}

// ---- pointers and strings ----------------------------------------------------

TEST(LogStreamTest, PointersPrintAsHex) {
  EXPECT_EQ(str(static_cast<const void*>(nullptr)), "0x0");
  EXPECT_EQ(str(reinterpret_cast<const void*>(uintptr_t{0x7ffd5c3a1b20})), "0x7ffd5c3a1b20");
  EXPECT_EQ(str(reinterpret_cast<const void*>(uintptr_t{0xf})), "0xf");
  EXPECT_EQ(str(reinterpret_cast<const void*>(uintptr_t{0x10})), "0x10");
  EXPECT_EQ(str(reinterpret_cast<const void*>(~uintptr_t{0})), "0xffffffffffffffff");
  // Any object pointer, as glibc's %p prints it.
  int local = 0;
  char expected[32];
  std::snprintf(expected, sizeof expected, "%p", static_cast<void*>(&local));
  EXPECT_EQ(str(&local), expected);
  const double* pd = reinterpret_cast<const double*>(uintptr_t{0xabcdef0});
  EXPECT_EQ(str(pd), "0xabcdef0");
}

int sampleFunction(double) { return 0; }

TEST(LogStreamTest, FunctionPointersPrintAsHexNotAsBool) {
  char expected[32];
  std::snprintf(expected, sizeof expected, "%p", reinterpret_cast<void*>(&sampleFunction));
  EXPECT_EQ(str(&sampleFunction), expected);
  EXPECT_NE(str(&sampleFunction), "1");
}

TEST(LogStreamTest, NullptrPrintsNull) { EXPECT_EQ(str(nullptr), "(null)"); }

TEST(LogStreamTest, LongDoublePrintsAsTheNearestDouble) {
  EXPECT_EQ(str(0.1L), "0.1");
  EXPECT_EQ(str(-2.5L), "-2.5");
}

TEST(LogStreamTest, CStringsAreCopiedAndANullOneWritesNullInParentheses) {
  EXPECT_EQ(str("hello"), "hello");
  EXPECT_EQ(str(""), "");
  char mutableText[] = "mutable";
  EXPECT_EQ(str(static_cast<char*>(mutableText)), "mutable");
  const char* null = nullptr;
  EXPECT_EQ(str(null), "(null)");
  char* mutableNull = nullptr;
  EXPECT_EQ(str(mutableNull), "(null)");
}

TEST(LogStreamTest, StdStringAndStringViewKeepTheirLength) {
  const std::string withNul("a\0b", 3);
  LogStream s;
  s << withNul;
  EXPECT_EQ(s.buffer().toString(), "a\\x00b") << "the NUL is kept, escaped";
  // A view into a longer buffer stops at its own end, not at a '\0'.
  const char text[] = "abcdef";
  EXPECT_EQ(str(std::string_view(text + 1, 3)), "bcd");
  EXPECT_EQ(str(std::string(3000, 'q')), std::string(3000, 'q'));
}

TEST(LogStreamTest, ChainedOperandsAppendInOrderAndResetBufferEmptiesIt) {
  LogStream s;
  s << "fd=" << 7 << ' ' << std::string("peer") << '=' << std::string_view("1.2.3.4") << " load "
    << 0.5 << " ok " << true;
  EXPECT_EQ(str(s), "fd=7 peer=1.2.3.4 load 0.5 ok 1");
  s.resetBuffer();
  EXPECT_EQ(s.buffer().length(), 0u);
  s << "again";
  EXPECT_EQ(str(s), "again");
}

// ---- Fmt ---------------------------------------------------------------------

TEST(FmtTest, FormatsLikeSnprintf) {
  EXPECT_EQ(str(Fmt("%.3f", 3.14159)), "3.142");
  EXPECT_EQ(str(Fmt("%5d|", 42)), "   42|");
  EXPECT_EQ(str(Fmt("%08x", 0xbeefu)), "0000beef");
  EXPECT_EQ(str(Fmt("%s", "")), "");
  Fmt f("%d-%d", 1, 2);
  EXPECT_EQ(std::string(f.data(), f.length()), "1-2");
}

TEST(FmtTest, LongOutputIsCutAtMaxLength) {
  Fmt f("%060d", 1);
  ASSERT_EQ(f.length(), Fmt::kMaxLength);
  EXPECT_EQ(std::string(f.data(), f.length()), std::string(Fmt::kMaxLength, '0'));
  Fmt exact("%047d", 7);
  EXPECT_EQ(exact.length(), Fmt::kMaxLength);
  EXPECT_EQ(exact.data()[Fmt::kMaxLength - 1], '7');
}

// ---- the buffer's promises ---------------------------------------------------

TEST(LogStreamTest, FormattingDoesNotAllocate) {
  const std::string longString(200, 's');  // beyond the small-string buffer
  int object = 0;
  // The hook must see allocations, or a zero below would prove nothing.
  const long probe = g_allocations.load();
  delete new int(1);
  ASSERT_EQ(g_allocations.load(), probe + 1);

  const long before = g_allocations.load();
  {
    LogStream s;
    s << 1 << -2L << 3ULL << std::numeric_limits<int64_t>::min() << 0.1 << 2.5f << -0.0
      << std::numeric_limits<double>::quiet_NaN() << 'c' << true << "literal" << longString
      << std::string_view(longString) << &object << Fmt("%.2f", 1.5);
    EXPECT_GT(s.buffer().length(), 400u);
  }
  EXPECT_EQ(g_allocations.load(), before);
}

// Constructing a stream must not clear its 4 KB: a log statement pays only
// for the bytes it writes.
TEST(LogStreamTest, ConstructionLeavesTheBufferUntouched) {
  alignas(LogStream) unsigned char storage[sizeof(LogStream)];
  std::memset(storage, 0xab, sizeof storage);
  // Keeps the compiler from treating the fill as dead before the constructor.
  asm volatile("" : : "r"(storage) : "memory");
  LogStream* s = new (storage) LogStream;
  asm volatile("" : : "r"(storage) : "memory");
  *s << "hi";
  const size_t offset = static_cast<size_t>(
      reinterpret_cast<const unsigned char*>(s->buffer().data()) - storage);
  ASSERT_LE(offset + kCapacity, sizeof storage);
  EXPECT_EQ(storage[offset], 'h');
  EXPECT_EQ(storage[offset + 1], 'i');
  EXPECT_EQ(storage[offset + 2], 0xab);
  EXPECT_EQ(storage[offset + kCapacity / 2], 0xab);
  EXPECT_EQ(storage[offset + kCapacity - 1], 0xab);
  s->~LogStream();
}

// A stream followed by a guard zone, to see any byte written past the end.
struct Guarded {
  static constexpr unsigned char kGuard = 0x5a;
  LogStream stream;
  unsigned char guard[64];

  Guarded() { std::memset(guard, kGuard, sizeof guard); }
  bool guardIntact() const {
    for (unsigned char c : guard) {
      if (c != kGuard) return false;
    }
    return true;
  }
  void fill(size_t n) {
    const std::string filler(n, '.');
    stream << filler;
  }
};

TEST(LogStreamTest, StringsFillToTheMessagesEndAndAreCutThere) {
  for (size_t n : {kMessageEnd - 1, kMessageEnd, kMessageEnd + 1, 2 * kCapacity}) {
    auto g = std::make_unique<Guarded>();
    std::string text(n, 'a');
    text.back() = 'z';  // shows whether the end was cut
    g->stream << text;
    const size_t kept = n < kMessageEnd ? n : kMessageEnd;
    ASSERT_EQ(g->stream.buffer().length(), kept) << n;
    EXPECT_EQ(str(g->stream), text.substr(0, kept)) << n;
    EXPECT_EQ(g->stream.truncated(), n > kMessageEnd) << n;
    // Then more: it fills the last byte if there is one, never beyond.
    g->stream << "XY" << std::string("long tail") << std::string_view("view") << 'c';
    EXPECT_EQ(g->stream.buffer().length(), kMessageEnd) << n;
    EXPECT_EQ(g->stream.buffer().avail(), 0u) << n;
    EXPECT_TRUE(g->stream.truncated()) << n;
    const char last = n == kMessageEnd - 1 ? 'X' : (n == kMessageEnd ? 'z' : 'a');
    EXPECT_EQ(g->stream.buffer().data()[kMessageEnd - 1], last) << n;
    EXPECT_TRUE(g->guardIntact()) << n;
  }
}

// A text field, as muon::kv writes one (LogFields.h).
void field(LogStream& s, const char* name, const std::string& value) {
  s.beginField(name, true);
  s << value;
  s.endField();
}

// Issue #40: the message gives way, not what ends the line. Past the
// message's end a field still goes in whole, and the finished line carries
// the cut marker before its trailer.
TEST(LogStreamTest, ACutMessageLeavesRoomForFieldsAndIsMarked) {
  auto g = std::make_unique<Guarded>();
  g->stream << std::string(5000, 'm') << " tail" << 42;
  field(g->stream, "user", "alice");
  g->stream.beginField("ms", false);
  g->stream << 12;
  g->stream.endField();
  g->stream.closeFields();
  const char trailer[] = " - f.cc:1\n";
  EXPECT_TRUE(g->stream.finishLine(trailer, sizeof trailer - 1));
  EXPECT_EQ(str(g->stream), std::string(kMessageEnd, 'm') +
                                " user=alice ms=12 log.truncated=true - f.cc:1\n");
  EXPECT_EQ(g->stream.trailingFieldsFrom(g->stream.buffer().length() - (sizeof trailer - 1)),
            kMessageEnd);
  EXPECT_TRUE(g->guardIntact());
  // A message that fits is not marked, even when its fields reach past
  // the message's end.
  auto h = std::make_unique<Guarded>();
  h->stream << std::string(kMessageEnd - 4, 'm');
  field(h->stream, "user", "alice");
  h->stream.closeFields();
  EXPECT_FALSE(h->stream.finishLine(trailer, sizeof trailer - 1));
  EXPECT_EQ(str(h->stream), std::string(kMessageEnd - 4, 'm') + " user=alice - f.cc:1\n");
  EXPECT_FALSE(h->stream.truncated());
}

// A field too long for the line is cut at the room kept for the marker and
// the trailer, and the line is marked as cut.
TEST(LogStreamTest, AFieldTooLongForTheLineIsCutAndMarked) {
  for (const std::string& value : {std::string(5000, 'v'), std::string(5000, '"')}) {
    auto g = std::make_unique<Guarded>();
    g->stream << "m";
    field(g->stream, "big", value);
    g->stream.closeFields();
    EXPECT_TRUE(g->stream.truncated());
    const char trailer[] = " - f.cc:1\n";
    EXPECT_TRUE(g->stream.finishLine(trailer, sizeof trailer - 1));
    const std::string text = str(g->stream);
    EXPECT_LE(text.size(), kCapacity);
    const std::string tail = " log.truncated=true - f.cc:1\n";
    ASSERT_GT(text.size(), tail.size());
    EXPECT_EQ(text.substr(text.size() - tail.size()), tail);
    EXPECT_EQ(text.substr(0, 6), "m big=");
    EXPECT_TRUE(g->guardIntact());
  }
}

// A field whose name finds no room at the line's end is left out whole:
// none of its value joins the field before it ("a=xxx12345", "a=xxx\"\""),
// at every distance from the end around the name's room.
TEST(LogStreamTest, AFieldLeftOutAtTheEndLeavesTheFieldBeforeAsItWas) {
  for (size_t filler = 700; filler < 1000; ++filler) {
    for (const std::string& next : {std::string("12345"), std::string()}) {
      auto g = std::make_unique<Guarded>();
      g->stream << std::string(5000, 'm');
      const std::string before(filler, 'x');
      field(g->stream, "a", before);
      field(g->stream, "n", next);
      g->stream.closeFields();
      const char trailer[] = " - f.cc:1\n";
      g->stream.finishLine(trailer, sizeof trailer - 1);
      const std::string text = str(g->stream);
      const std::string end = " log.truncated=true - f.cc:1\n";
      const size_t a = text.find(" a=");
      ASSERT_NE(a, std::string::npos) << filler;
      const std::string rest = text.substr(a);
      // Both whole; or "a" whole and "n" left out; or "a" cut (a prefix of
      // its value) and "n" left out. Nothing else.
      const bool both = rest == " a=" + before + " n=\"" + next + "\"" + end;
      const bool aAlone = rest == " a=" + before + end;
      const size_t value = rest.size() - 3 - end.size();
      const bool aCut = rest.size() >= 3 + end.size() && value < before.size() &&
                        rest == " a=" + before.substr(0, value) + end;
      EXPECT_TRUE(both || aAlone || aCut) << filler << ": ..." << rest.substr(3 + before.size() - 20);
      EXPECT_TRUE(g->guardIntact()) << filler;
    }
  }
}

// Regression: a number that did not fit was cut ("12345" became "123"),
// which reads as a different value. Now it is written whole or not at all,
// at every distance from the end (both sides of the 48-byte fast path).
TEST(LogStreamTest, NumbersAreWrittenWholeOrNotAtAll) {
  struct Value {
    const char* what;
    void (*write)(LogStream&);
    std::string text;
  };
  const Value values[] = {
      {"int 7", [](LogStream& s) { s << 7; }, "7"},
      {"int 12345", [](LogStream& s) { s << 12345; }, "12345"},
      {"INT64_MIN", [](LogStream& s) { s << std::numeric_limits<int64_t>::min(); },
       "-9223372036854775808"},
      {"UINT64_MAX", [](LogStream& s) { s << std::numeric_limits<uint64_t>::max(); },
       "18446744073709551615"},
      {"short -1", [](LogStream& s) { s << static_cast<short>(-1); }, "-1"},
      {"double", [](LogStream& s) { s << -2.2250738585072014e-308; }, "-2.2250738585072014e-308"},
      {"float", [](LogStream& s) { s << 0.1f; }, "0.1"},
      {"pointer",
       [](LogStream& s) { s << reinterpret_cast<const void*>(uintptr_t{0x7ffd5c3a1b20}); },
       "0x7ffd5c3a1b20"},
      {"Fmt", [](LogStream& s) { s << Fmt("%.4f", 2.0); }, "2.0000"},
  };
  for (const Value& v : values) {
    for (size_t avail = 0; avail <= 64; ++avail) {
      auto g = std::make_unique<Guarded>();
      g->fill(kMessageEnd - avail);
      v.write(g->stream);
      const std::string expected =
          std::string(kMessageEnd - avail, '.') + (v.text.size() <= avail ? v.text : "");
      ASSERT_EQ(str(g->stream), expected) << v.what << " with " << avail << " bytes free";
      // A number left out ends the message: a shorter one after it is left out too.
      g->stream << 1;
      ASSERT_EQ(str(g->stream), expected + (v.text.size() < avail ? "1" : ""))
          << v.what << " with " << avail << " bytes free";
      ASSERT_TRUE(g->guardIntact()) << v.what << " with " << avail << " bytes free";
    }
  }
}

TEST(LogStreamTest, IntegersFillToCapacity) {
  // capacity - 1 bytes, then a one-digit number: exactly full.
  auto g = std::make_unique<Guarded>();
  g->fill(kMessageEnd - 1);
  g->stream << 9;
  EXPECT_EQ(g->stream.buffer().length(), kMessageEnd);
  EXPECT_EQ(g->stream.buffer().data()[kMessageEnd - 1], '9');
  // Full: nothing more goes in.
  g->stream << 1 << -1 << 0.5 << 'x';
  EXPECT_EQ(g->stream.buffer().length(), kMessageEnd);
  EXPECT_EQ(g->stream.buffer().data()[kMessageEnd - 1], '9');
  EXPECT_TRUE(g->guardIntact());
  // A buffer of nothing but numbers: every one whole, the last one that fits in.
  auto h = std::make_unique<Guarded>();
  for (int i = 0; i < 1000; ++i) h->stream << 1234567 << ',';
  const std::string text = str(h->stream);
  EXPECT_EQ(text.size(), kMessageEnd);
  EXPECT_EQ(text.substr(text.size() - 8), "1234567,");
  EXPECT_TRUE(h->guardIntact());
}

TEST(FixedBufferTest, AppendReportsWhatItTook) {
  detail::FixedBuffer<8> b;
  EXPECT_EQ(b.capacity(), 8u);
  EXPECT_EQ(b.append("abcde", 5), 5u);
  EXPECT_EQ(b.avail(), 3u);
  EXPECT_EQ(b.append("fghij", 5), 3u);
  EXPECT_EQ(b.toString(), "abcdefgh");
  EXPECT_EQ(b.append("x", 1), 0u);
  b.unwind(2);
  EXPECT_EQ(b.toStringView(), "abcdef");
  b.reset();
  EXPECT_EQ(b.length(), 0u);
  EXPECT_EQ(b.avail(), 8u);
}

// Values of every length, with every digit pattern a split into halves
// could get wrong (zeros at the start of a half, nines at its end), against
// std::to_chars.
TEST(ConvertTest, DecimalsOfEveryLengthAreToCharsDigits) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  char got[32];
  char want[32];
  for (int i = 0; i < 200000; ++i) {
    const uint64_t r = next();
    // Any length from 1 to 20 digits, and halves of zeros or nines.
    uint64_t v = r >> (next() % 64);
    if (i % 4 == 1) v -= v % 100000000;
    if (i % 4 == 2) v = v - v % 10000 + 9999;
    const auto w = static_cast<long long>(next());
    const size_t n = detail::convertDecimal(got, static_cast<unsigned long long>(v));
    ASSERT_EQ(std::string(got, n), std::string(want, std::to_chars(want, want + 32, v).ptr)) << v;
    const size_t m = detail::convertDecimal(got, w);
    ASSERT_EQ(std::string(got, m), std::string(want, std::to_chars(want, want + 32, w).ptr)) << w;
  }
}

TEST(ConvertTest, DecimalAndHexHelpers) {
  char buf[32];
  EXPECT_EQ(std::string(buf, detail::convertDecimal(buf, std::numeric_limits<long long>::min())),
            "-9223372036854775808");
  EXPECT_EQ(std::string(buf, detail::convertDecimal(buf, 0ULL)), "0");
  EXPECT_EQ(std::string(buf, detail::convertHex(buf, 0ULL)), "0x0");
  EXPECT_EQ(std::string(buf, detail::convertHex(buf, 0xdeadbeefULL)), "0xdeadbeef");
  EXPECT_EQ(std::string(buf, detail::convertHex(buf, ~0ULL)), "0xffffffffffffffff");
}

}  // namespace
}  // namespace muon

// ---- control characters in string operands (CWE-117) ------------------------

using muon::LogStream;

namespace {

class ControlCharacters : public ::testing::Test {
 protected:
  void TearDown() override { LogStream::setControlCharacters(LogStream::kEscape); }
};

std::string streamed(const std::string& text) {
  LogStream s;
  s << "user " << text << " done";
  return s.buffer().toString();
}

}  // namespace

TEST_F(ControlCharacters, AForgedLineIsEscapedByDefaultAndKeptRawOnRequest) {
  const std::string name = "x\n20261123 10:00:00.000000Z  4242 ERROR admin logged in - auth.cc:1";
  EXPECT_EQ(LogStream::controlCharacters(), LogStream::kEscape);
  EXPECT_EQ(streamed(name),
            "user x\\n20261123 10:00:00.000000Z  4242 ERROR admin logged in - auth.cc:1 done");
  LogStream::setControlCharacters(LogStream::kRaw);
  EXPECT_EQ(streamed(name), "user " + name + " done");
}

TEST_F(ControlCharacters, EscapeSequencesAndOtherControlBytesBecomeHex) {
  std::string all;
  for (int c = 0; c < 0x20; ++c) all += static_cast<char>(c);
  all += "\x7f\x1b[2J\xc3\xa9";  // DEL, a terminal's clear-screen, then UTF-8 for e-acute
  EXPECT_EQ(streamed(all),
            "user \\x00\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\t\\n\\x0b\\x0c\\r\\x0e\\x0f"
            "\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f"
            "\\x7f\\x1b[2J\xc3\xa9 done");
  LogStream::setControlCharacters(LogStream::kRaw);
  EXPECT_EQ(streamed(all), "user " + all + " done");
}

TEST_F(ControlCharacters, LinesWithoutThemAreByteForByteAndChecksSeeEveryPosition) {
  // Printable ASCII, tab and UTF-8 pass unchanged; a control byte is found
  // at every position of a string, whatever its length (the 8-byte scan and
  // its tail).
  std::string clean = "plain\ttext \xe4\xb8\xad 0123456789 ~!@#$%^&*()_+{}|:<>?";
  EXPECT_EQ(streamed(clean), "user " + clean + " done");
  for (size_t len = 1; len <= 40; ++len) {
    for (size_t at = 0; at < len; ++at) {
      std::string t(len, 'a');
      t[at] = '\r';
      std::string want = t.substr(0, at) + "\\r" + t.substr(at + 1);
      EXPECT_EQ(streamed(t), "user " + want + " done") << len << " " << at;
      // The ends of the ranges the scan tests: 0x1f and DEL are escaped,
      // a space and bytes from 0x80 up are not.
      t[at] = '\x1f';
      EXPECT_EQ(streamed(t), "user " + t.substr(0, at) + "\\x1f" + t.substr(at + 1) + " done")
          << len << " " << at;
      t[at] = '\x7f';
      EXPECT_EQ(streamed(t), "user " + t.substr(0, at) + "\\x7f" + t.substr(at + 1) + " done")
          << len << " " << at;
      for (char kept : {' ', '\x80', '\xff'}) {
        t[at] = kept;
        EXPECT_EQ(streamed(t), "user " + t + " done") << len << " " << at;
      }
    }
  }
}

TEST_F(ControlCharacters, AnEscapeIsCutWholeAtTheEndOfTheBuffer) {
  LogStream s;
  s << std::string(LogStream::kMessageEnd - 2, 'a') << std::string("\x1b");
  EXPECT_EQ(s.buffer().length(), LogStream::kMessageEnd - 2) << "no half of \\x1b";
  EXPECT_TRUE(s.truncated());
  LogStream t;
  t << std::string(LogStream::kMessageEnd - 2, 'a') << std::string("\n");
  EXPECT_EQ(t.buffer().toString().substr(LogStream::kMessageEnd - 2), "\\n");
  EXPECT_FALSE(t.truncated());
}

// Doubles of a few digits take a short cut (detail::convertShortDouble);
// the text must still be std::to_chars's, digit for digit, and the short cut
// must take the values it is for.
TEST(LogStreamDoubles, TheShortCutWritesWhatToCharsWrites) {
  size_t taken = 0;
  size_t checked = 0;
  auto check = [&](double v) {
    char want[64];
    auto result = std::to_chars(want, want + sizeof want, v);
    LogStream s;
    s << v;
    ASSERT_EQ(s.buffer().toString(), std::string(want, result.ptr)) << v;
    char fast[64];
    taken += muon::detail::convertShortDouble(fast, v) != 0;
    ++checked;
  };
  for (int i = -20000; i < 20000; ++i) {
    check(i * 1.25 + 0.1);
    check(i / 1000.0);
    check(i / 7.0);
    check(i * 1e9);
    check(i * 1e-6);
  }
  for (int e = -20; e <= 20; ++e) {
    for (int m = 1; m < 200; ++m) check(m * std::pow(10.0, e));
  }
  EXPECT_GT(taken, checked / 2) << "the short cut is hardly ever taken";
}

// Recorded operands, replayed, are the bytes the stream writes for them
// directly: the replay's plain run (numbers, chars, strings with nothing to
// escape, Fmt) and the stream's own writers it leaves the rest to (text to
// escape, a field), at every room before the message's end, the room where
// the run is no longer taken and the cuts included.
namespace {

void writePlainAndOther(muon::LogStream& s) {
  s << 'c' << -5 << 7u << INT64_MIN << UINT64_MAX << 0.1f << -3.0e38f << 1e-40f << 0.1 << -1e300
    << 5e-324 << std::nan("") << static_cast<const void*>(nullptr)
    << reinterpret_cast<const void*>(uintptr_t{0x7ffd5c3a1b20}) << "literal" << std::string("str")
    << std::string_view() << muon::Fmt("%05d", 42) << std::string(40, 'w');
  s.beginField("k", false);
  s << 34;
  s.endField();
  s << " after the field " << 2.5f << 'z';
  s << std::string("tab\tnew\nline\x1b[31m") << " then plain " << 12;
}

// The same with the text to escape first.
void writeEscapedFirst(muon::LogStream& s) {
  s << "plain " << 1 << std::string("\x01") << " after " << 2.5;
}

TEST(LogStreamReplay, RecordedOperandsReplayAsTheBytesTheStreamWrites) {
  for (auto write : {&writePlainAndOther, &writeEscapedFirst}) {
    muon::LogStream recorded;
    recorded.startRecording(nullptr, nullptr);
    write(recorded);
    ASSERT_TRUE(recorded.recording());
    const std::string_view operands = recorded.buffer().toStringView();
    // From a message's full room down to none: the filler takes the rest.
    for (size_t filler = 0; filler <= muon::LogStream::kMessageEnd; ++filler) {
      const std::string fill(filler, 'p');
      muon::LogStream direct;
      direct.append(fill.data(), fill.size());
      write(direct);
      direct.closeFields();
      muon::LogStream replayed;
      replayed.append(fill.data(), fill.size());
      ASSERT_TRUE(muon::detail::replayOperands(operands.data(), operands.size(), replayed));
      replayed.closeFields();
      ASSERT_EQ(replayed.buffer().toStringView(), direct.buffer().toStringView())
          << "filler " << filler;
      ASSERT_EQ(replayed.truncated(), direct.truncated()) << "filler " << filler;
    }
  }
}

}  // namespace
