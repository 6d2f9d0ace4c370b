// Every kind of operand and LOG_* statement, for tests that check that a
// deferred or recorded line is the line a statement formats itself:
//   muon::test::logEveryKindOfStatement();
// Each line differs from the others. Log it once before the run that is
// compared, so that the rate limit's counts ("[1 suppressed] ") are the same
// in every run after the first. Call from one thread at a time.
#pragma once

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "muon/base/Logging.h"

namespace muon {
namespace test {
namespace every {

struct Point {
  int x;
  int y;
};
inline muon::LogStream& operator<<(muon::LogStream& s, const Point& p) {
  return s << '(' << p.x << ", " << p.y << ')';
}

// A user type whose output logs a line of its own while the outer
// statement is being recorded.
struct Chatty {
  int value;
};
inline muon::LogStream& operator<<(muon::LogStream& s, const Chatty& c) {
  LOG_INFO << "inner " << c.value;
  return s << "chatty " << c.value;
}

// A thousand and more operands in one statement.
struct ManyNumbers {
  int count;
};
inline muon::LogStream& operator<<(muon::LogStream& s, const ManyNumbers& m) {
  for (int i = 0; i < m.count; ++i) s << i << ',';
  return s;
}

// Pointers past the point where the record no longer fits: the one that
// does not fit is written as text, in hex like the rest.
struct ManyPointers {
  int count;
};
inline muon::LogStream& operator<<(muon::LogStream& s, const ManyPointers& m) {
  for (int i = 0; i < m.count; ++i) s << reinterpret_cast<const void*>(uintptr_t{16} * i) << ',';
  return s;
}

inline void noop() {}

}  // namespace every

// Every kind of operand and statement, each line different.
inline void logEveryKindOfStatement() {
  using namespace every;
  LOG_INFO << "plain text";
  // Literals: one with bytes to escape, one without, one empty.
  LOG_INFO << "literal\twith\ncontrol\x7f bytes" << '|' << "clean literal" << '|' << "";
  LOG_INFO << 'c' << true << false << static_cast<signed char>(-5)
           << static_cast<unsigned char>(250) << static_cast<short>(-300)
           << static_cast<unsigned short>(65000);
  LOG_INFO << INT_MIN << ' ' << INT_MAX << ' ' << UINT_MAX << ' ' << LONG_MIN << ' ' << ULONG_MAX
           << ' ' << LLONG_MIN << ' ' << ULLONG_MAX;
  LOG_WARN << 0.1 << ' ' << 1e300 << ' ' << -0.0 << ' ' << 5e-324 << ' '
           << std::numeric_limits<double>::infinity() << ' ' << std::nan("") << ' ' << 0.1f << ' '
           << 3.0e38f << ' ' << static_cast<long double>(2.5);
  // A static's address: the same in every run, whatever the caller's stack.
  static int object = 7;
  LOG_ERROR << static_cast<const void*>(&object) << ' ' << static_cast<const void*>(nullptr) << ' '
            << nullptr << ' ' << static_cast<const char*>(nullptr) << ' ' << &noop;
  std::string control = "tab\there\nnew\rline\x01\x7f end";
  LOG_INFO << control << '|' << std::string_view("view\x1b[31m") << '|' << std::string() << '|'
           << std::string_view();  // no bytes, and a null pointer to them
  LOG_INFO << muon::Fmt("%08.3f|%-5d|%s", 3.14159, 42, "fmt");
  LOG_INFO << Point{3, -4} << " and " << Point{0, 0};
  LOG_DEBUG << "debug with its function " << 1;
  LOG_TRACE << "trace " << 2;
  errno = ENOENT;
  LOG_SYSERR << "open failed";
  // Four calls a run: each run's lines carry the same "[1 suppressed] ".
  for (int i = 0; i < 4; ++i) LOG_EVERY_N(INFO, 2) << "every second " << i;
  // Records that outgrow a statement's buffer: text on the caller instead.
  LOG_INFO << std::string(5000, 'x');
  LOG_INFO << ManyNumbers{1500};
  LOG_INFO << ManyPointers{600};
  // Around the size where the operands fit and the trailer no longer does.
  for (size_t n = 3900; n < 4000; n += 3) LOG_INFO << std::string(n, 'y');
  LOG_INFO << "before " << Chatty{9} << " after";
  // Fields (muon::kv) of every kind, values that need quoting, and a context.
  LOG_INFO << "fields" << kv("s", "alice") << kv("n", -12) << kv("u", 7u) << kv("d", 0.25)
           << kv("b", true) << kv("c", 'x') << kv("f", muon::Fmt("%.2f", 1.5))
           << kv("p", Point{1, 2}) << kv("q", "two words \"q\" \\ =\n\x1b") << kv("e", "")
           << kv("num", "12") << kv("bad name=", 1) << kv("nan", std::nan(""));
  LOG_INFO << "big field" << kv("v", std::string(5000, 'z')) << kv("after", 1);
  LOG_INFO << "big quoted field" << kv("v", std::string(3950, '"')) << kv("after", 1);
  {
    muon::LogContext outer{{"request_id", "r-1"}, {"n", 5}};
    muon::LogContext inner{{"n", 6}, {"step", "two words"}};
    LOG_WARN << "in context" << kv("own", 1);
  }
  // Messages cut to fit the line, their fields and context kept: one the
  // statement cuts (a record that outgrows its buffer), one the formatter
  // cuts (900 control bytes, recorded as they are, 3,600 once escaped).
  {
    muon::LogContext context{{"request_id", "7f3a"}};
    LOG_INFO << std::string(5000, 'x') << kv("user", "alice") << kv("ms", 12);
    LOG_INFO << std::string(900, '\x01') << kv("user", "alice") << kv("ms", 12);
  }
  LOG_INFO << "last";
}

}  // namespace test
}  // namespace muon
