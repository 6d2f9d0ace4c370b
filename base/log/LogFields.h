// Key-value fields and per-thread context: structure a log store can query.
//
//   LOG_INFO << "login" << muon::kv("user", name) << muon::kv("ms", elapsed);
//   // 20261121 08:15:02.123456Z  4321 INFO  login user=alice ms=12 - auth.cc:42
//
//   muon::LogContext ctx{{"request_id", id}, {"peer", peer}};
//   LOG_INFO << "served";  // ... INFO  served request_id=7f3a peer=10.0.0.5:4711 - ...
//
// kv(name, value) is one << operand: any value << takes (numbers, strings,
// Fmt, a user type with its operator<<). Like every operand it is recorded
// and formatted where the line is (AsyncLogging's backend, a recovery, or the
// statement itself). In a text line it is " name=value" where it stands,
// in its logfmt form (Logfmt.h: quoted and escaped when the value needs it);
// write fields after the message, so that readers (JSON lines, muon-logcat
// --json, syslog's structured data) find them at its end. Numbers and bools
// stay numbers and bools there; strings stay strings, even "12".
//
// A LogContext adds its fields to every line its thread logs while it
// lives, after the statement's own (and after LOG_SYSERR's errno text).
// While its thread's contexts hold no field, a statement pays what it pays
// with none.
// Contexts nest: an inner one adds its fields to the outer one's and takes
// its place for a name both have; its destruction restores the outer one. A
// thread with no context pays one thread-local load per statement. A
// context belongs to the thread that made it: make it on the stack, in the
// scope whose lines it should mark (a request's handler, a connection's
// callback), and destroy it on that thread, innermost first.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "muon/base/LogStream.h"

namespace muon {

template <typename T>
struct KeyValue {
  std::string_view name;
  const T& value;
  bool cleanName;  // known to be clean (LogStream::beginField)
};

// A field; the value is read when the operand is streamed (the statement).
template <typename T>
KeyValue<T> kv(std::string_view name, const T& value) {
  return KeyValue<T>{name, value, false};
}
namespace detail {
// Whether the array holds a clean name (Logfmt.h) filling it up to its
// '\0'. Straight-line code, not a loop, so that the compiler folds it for a
// literal.
template <size_t N, size_t... I>
inline bool isCleanNameArray(const char (&name)[N], std::index_sequence<I...>) {
  return name[N - 1] == '\0' && (isFieldNameByte(name[I]) && ...);
}
}  // namespace detail

// A name in a char array, such as a literal: one the compiler sees whole is
// checked when the statement is compiled, not each time it runs (where it
// cannot tell, as without optimization, the name is checked as any other).
// Its length is strlen's: an array may hold a shorter string.
template <size_t N, typename T>
__attribute__((always_inline)) inline KeyValue<T> kv(const char (&name)[N], const T& value) {
  if constexpr (N < 2 || N - 1 > detail::kMaxFieldName) {
    return KeyValue<T>{std::string_view(name), value, false};
  } else {
    const bool clean = detail::isCleanNameArray(name, std::make_index_sequence<N - 1>());
    return KeyValue<T>{std::string_view(name), value, __builtin_constant_p(clean) && clean};
  }
}

namespace detail {
// Numbers, bools and Fmt are written bare: a reader takes "12" as a number.
template <typename T>
inline constexpr bool kBareField =
    (std::is_arithmetic_v<T> && !std::is_same_v<T, char>) || std::is_same_v<T, Fmt>;
// Values that LogStream writes as one operand (one record when deferred).
template <typename T>
inline constexpr bool kOneOperandField =
    std::is_arithmetic_v<T> || std::is_same_v<T, Fmt> || std::is_same_v<T, std::string> ||
    std::is_same_v<T, std::string_view> || std::is_same_v<T, const char*> ||
    std::is_same_v<T, char*> ||
    (std::is_array_v<T> && std::is_same_v<std::remove_cv_t<std::remove_extent_t<T>>, char>);
}  // namespace detail

// Inlined, so that a literal name's length and check are constants where
// the field is written.
template <typename T>
__attribute__((always_inline)) inline LogStream& operator<<(LogStream& stream,
                                                            const KeyValue<T>& field) {
  constexpr bool kText = !detail::kBareField<T>;
  if constexpr (detail::kOneOperandField<T>) {
    stream.beginOneOperandField(field.name, kText, field.cleanName);
  } else {
    stream.beginField(field.name, kText, field.cleanName);
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (field.value) {
      stream.append("true", 4);
    } else {
      stream.append("false", 5);
    }
  } else {
    stream << field.value;
  }
  if constexpr (detail::kOneOperandField<T>) {
    stream.endOneOperandField(std::is_arithmetic_v<T> && !std::is_same_v<T, char>);
  } else {
    stream.endField();
  }
  return stream;
}

class LogContext {
 public:
  // One field of a context, its value formatted once, when it is made.
  struct Field {
    template <typename T>
    Field(std::string_view n, const T& v) : name(n), text(!detail::kBareField<T>) {
      // Inside a field (its start " _=" skipped) strings are taken raw:
      // the value as the operand writes it, before its logfmt form.
      LogStream s;
      s.beginField("", text);
      if constexpr (std::is_same_v<T, bool>) {
        s << (v ? "true" : "false");
      } else {
        s << v;
      }
      value.assign(s.buffer().data() + 3, s.buffer().length() - 3);
      encode();
    }
    std::string name;
    std::string value;
    bool text;  // from strings (kv's rule)
    // " name=value" as a text line shows it, made once; empty if it is so
    // long that a line might cut it (LogStream::appendEncodedField).
    std::string encoded;

   private:
    void encode();
  };

  LogContext(std::initializer_list<Field> fields);
  ~LogContext();
  LogContext(const LogContext&) = delete;
  LogContext& operator=(const LogContext&) = delete;

  // Adds a field to this context (for lines logged from now on).
  template <typename T>
  void add(std::string_view name, const T& value) {
    fields_.emplace_back(name, value);
    countAdded();
  }

  // The innermost context of the calling thread, or nullptr.
  static const LogContext* current();
  const LogContext* outer() const { return outer_; }
  const std::vector<Field>& fields() const { return fields_; }

 private:
  void countAdded();

  std::vector<Field> fields_;
  const LogContext* outer_;
};

namespace detail {
// Streams the fields of `innermost` and the contexts around it into
// `stream`, outermost first, each name once (the innermost value).
void appendContext(LogStream& stream, const LogContext& innermost);
}  // namespace detail

}  // namespace muon
