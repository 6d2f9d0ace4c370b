// CHECK macros: invariants that stop the process, glog's forms.
//
//   CHECK(fd >= 0) << "socket for " << peer;
//   CHECK_EQ(n, expected) << "short read";     // prints both values
//   Foo* foo = CHECK_NOTNULL(lookup(key));     // returns its argument
//   PCHECK(::close(fd) == 0) << "fd " << fd;   // appends errno's text
//   DCHECK_LT(index, size());                  // off under NDEBUG
//
// A failed check writes one FATAL line
//   "... FATAL Check failed: n == expected (3 vs. 4) short read - file.cc:42"
// then flushes (Logger::flush) and aborts, as LOG_FATAL does; the log level
// does not silence it. Every operand is evaluated exactly once, pass or fail,
// and the << context only on failure. CHECK_NOTNULL takes no << context.
//
// CHECK_EQ/NE/LT/LE/GT/GE need operands that compare with the operator and
// that LogStream can print (numbers, strings, pointers; enums print as their
// number). Integers of mixed signedness compare by value, as C++20's
// std::cmp_less does: CHECK_LT(-1, 1u) holds and CHECK_EQ(v.size(), 3)
// needs no cast.
//
// DCHECK* are CHECK* unless NDEBUG is defined; then they compile their
// operands (so they stay valid code) but evaluate nothing. muon's Release
// build does not define NDEBUG (CMakeLists.txt): its DCHECKs are on.
//
// This is an internal header, included by Logging.h: include that.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "muon/base/LogStream.h"
#include "muon/base/Logging.h"  // includes this header at its end

namespace muon {
namespace detail {

// Integers of mixed signedness compare by value; everything else uses the
// operator as written.
template <typename A, typename B>
constexpr bool mixedSignIntegers() {
  return std::is_integral<A>::value && std::is_integral<B>::value &&
         !std::is_same<A, bool>::value && !std::is_same<B, bool>::value &&
         std::is_signed<A>::value != std::is_signed<B>::value;
}

template <typename A, typename B>
constexpr bool checkEqual(const A& a, const B& b) {
  if constexpr (mixedSignIntegers<A, B>()) {
    if constexpr (std::is_signed<A>::value) {
      return a >= 0 && static_cast<std::make_unsigned_t<A>>(a) == b;
    } else {
      return b >= 0 && a == static_cast<std::make_unsigned_t<B>>(b);
    }
  } else {
    return a == b;
  }
}

template <typename A, typename B>
constexpr bool checkLess(const A& a, const B& b) {
  if constexpr (mixedSignIntegers<A, B>()) {
    if constexpr (std::is_signed<A>::value) {
      return a < 0 || static_cast<std::make_unsigned_t<A>>(a) < b;
    } else {
      return b >= 0 && a < static_cast<std::make_unsigned_t<B>>(b);
    }
  } else {
    return a < b;
  }
}

// The text of a failed CHECK_op, or empty (false) when it held.
class CheckOpFailure {
 public:
  CheckOpFailure() = default;
  explicit CheckOpFailure(std::string text) : text_(std::make_unique<std::string>(std::move(text))) {}
  explicit operator bool() const { return text_ != nullptr; }
  const std::string& text() const { return *text_; }

 private:
  std::unique_ptr<std::string> text_;
};

template <typename T>
std::string checkOperandText(const T& v) {
  LogStream stream;
  if constexpr (std::is_enum<T>::value) {
    stream << static_cast<std::underlying_type_t<T>>(v);
  } else {
    stream << v;
  }
  return stream.buffer().toString();
}

// "Check failed: a == b (1 vs. 2) " (Check.cc).
CheckOpFailure makeCheckOpFailure(const char* expression, const std::string& a,
                                  const std::string& b);

template <typename A, typename B>
__attribute__((noinline, cold)) CheckOpFailure checkOpFailed(const char* expression, const A& a,
                                                            const B& b) {
  return makeCheckOpFailure(expression, checkOperandText(a), checkOperandText(b));
}

#define MUON_DEFINE_CHECK_OP(name, holds)                                    \
  template <typename A, typename B>                                          \
  CheckOpFailure check##name(const A& a, const B& b, const char* expression) { \
    if (__builtin_expect(holds, 1)) return CheckOpFailure();                 \
    return checkOpFailed(expression, a, b);                                  \
  }
MUON_DEFINE_CHECK_OP(EQ, checkEqual(a, b))
MUON_DEFINE_CHECK_OP(NE, !checkEqual(a, b))
MUON_DEFINE_CHECK_OP(LT, checkLess(a, b))
MUON_DEFINE_CHECK_OP(LE, !checkLess(b, a))
MUON_DEFINE_CHECK_OP(GT, checkLess(b, a))
MUON_DEFINE_CHECK_OP(GE, !checkLess(a, b))
#undef MUON_DEFINE_CHECK_OP

// Writes the FATAL line "'name' must be non NULL" (and aborts) for a null
// pointer; otherwise hands the pointer back.
[[noreturn]] void checkNotNullFailed(const LogSite& site, const char* message);
template <typename T>
T&& checkNotNull(const LogSite& site, const char* message, T&& pointer) {
  if (__builtin_expect(pointer == nullptr, 0)) checkNotNullFailed(site, message);
  return std::forward<T>(pointer);
}

}  // namespace detail
}  // namespace muon

#define CHECK(condition)                                                      \
  MUON_LOG_STREAM_IF(__builtin_expect(!(condition), 0))                       \
  MUON_FATAL_STREAM << "Check failed: " #condition " "

// A while, not an expression: the failure's text must live through the
// statement. The loop body aborts, so it runs at most once; a user's
// unbraced else still binds to the user's if.
#define MUON_CHECK_OP(name, op, a, b)                                         \
  while (::muon::detail::CheckOpFailure muon_check_op_failure =               \
             ::muon::detail::check##name((a), (b), #a " " #op " " #b))         \
  MUON_FATAL_STREAM << muon_check_op_failure.text()

#define CHECK_EQ(a, b) MUON_CHECK_OP(EQ, ==, a, b)
#define CHECK_NE(a, b) MUON_CHECK_OP(NE, !=, a, b)
#define CHECK_LT(a, b) MUON_CHECK_OP(LT, <, a, b)
#define CHECK_LE(a, b) MUON_CHECK_OP(LE, <=, a, b)
#define CHECK_GT(a, b) MUON_CHECK_OP(GT, >, a, b)
#define CHECK_GE(a, b) MUON_CHECK_OP(GE, >=, a, b)

#define CHECK_NOTNULL(pointer) \
  ::muon::detail::checkNotNull(MUON_FATAL_SITE, "'" #pointer "' must be non NULL", (pointer))

// errno is taken when the check fails, before the << context runs.
#define PCHECK(condition)                                                     \
  MUON_LOG_STREAM_IF(__builtin_expect(!(condition), 0))                       \
  ::muon::Logger(MUON_FATAL_SITE, true).stream() << "Check failed: " #condition " "

#ifdef NDEBUG
#define DCHECK(condition) while (false) CHECK(condition)
#define DCHECK_EQ(a, b) while (false) CHECK_EQ(a, b)
#define DCHECK_NE(a, b) while (false) CHECK_NE(a, b)
#define DCHECK_LT(a, b) while (false) CHECK_LT(a, b)
#define DCHECK_LE(a, b) while (false) CHECK_LE(a, b)
#define DCHECK_GT(a, b) while (false) CHECK_GT(a, b)
#define DCHECK_GE(a, b) while (false) CHECK_GE(a, b)
#else
#define DCHECK(condition) CHECK(condition)
#define DCHECK_EQ(a, b) CHECK_EQ(a, b)
#define DCHECK_NE(a, b) CHECK_NE(a, b)
#define DCHECK_LT(a, b) CHECK_LT(a, b)
#define DCHECK_LE(a, b) CHECK_LE(a, b)
#define DCHECK_GT(a, b) CHECK_GT(a, b)
#define DCHECK_GE(a, b) CHECK_GE(a, b)
#endif
