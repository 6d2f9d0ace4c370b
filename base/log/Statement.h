// Statement: the path a LOG_INFO, LOG_WARN or LOG_ERROR statement takes
// (LOG_IF and the rate-limited forms too, at any level).
//
//   LOG_INFO << "accepted " << fd << " from " << peer;
//
// expands, inside the level check's for (MUON_LOG_AT_IF), to a Statement,
// the statement's scope, and
//
//   statement & statement.begin<INFO>() << "accepted " << fd << ...
//
// begin() looks at this thread's route (ThreadRoute below), resolved once
// per configuration change and checked by a generation number. On the
// common route, an AsyncLogging attached that formats lines itself, it
// starts the statement's record in place in the thread's queue
// (RecordQueue.h, RecordLane), writing the counter and the site into its
// header; each operand is then a tag and its bytes (LogOperands.h) stored
// by inline code at an offset the Recorder carries in a register; the `&`
// (commit) writes the header's first word and publishes the record with
// one release store. The backend formats the line (RecordFormatter.h).
//
// Every other case leaves the corridor once, out of line (Statement.cc),
// and goes through Logger with the operands recorded so far replayed into
// its LogStream (replayOperands: the same bytes a text statement makes):
// another route (text sinks, stdout, fan-out, the crash-safe spool, the
// backtrace ring), a level that flushes, LogContext fields, no room in
// place (the queue is crowded: Logger decides between waiting, dropping
// and the shared mode), a statement nested in another's operands, a string
// past the record's room (it moves to a slot of the thread's first), and an
// operand type the recorder does not store itself (Fmt, a kv of one, a
// user's operator<<(LogStream&, T)), from which the statement goes on as a
// Logger's stream.
//
// Room: a record in place may take kRecordRoom bytes. A Recorder<B, L>
// knows at compile time that B bytes are free after its offset, so an
// operand of a known size up to B (a number, a char array's bound) is
// stored without a check; a string of run-time length is checked.
//
// Thread safety: a statement runs on its thread only. The route's cache
// and the queue's lane are that thread's; only the lane's published
// position is read by the backend.
//
// This is an internal header, included by Logging.h: include that.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "muon/base/LogFields.h"
#include "muon/base/internal/LogOperands.h"
#include "muon/base/internal/LogSite.h"
#include "muon/base/LogStream.h"
#include "muon/base/internal/RecordQueue.h"
#include "muon/base/TscClock.h"

namespace muon {

class Logger;

namespace detail {

// Bumped by every change of the configuration and the clock: a thread's
// cached route made under another number is resolved again.
extern std::atomic<unsigned> g_routeGeneration;

// The lane of a thread whose statements take the slow path: never open (its
// write position is past its limit).
extern RecordLane g_noLane;

// The levels a statement may have (Logger::LogLevel, TRACE to FATAL).
inline constexpr int kStatementLevels = 6;

// The calling thread's route, as its statements' common path reads it: a
// statement at level L starts its record in `lanes[L]` (g_noLane where
// statements at L take the slow path: a level that flushes, or no lane);
// all of them take it while `generation` is not the current one. `lane` is
// the thread's lane, which the slow paths look at.
struct ThreadRoute {
  unsigned generation = 0;  // 0: never resolved, or forgotten
  RecordLane* lane = nullptr;  // g_noLane once resolved, if none
  RecordLane* lanes[kStatementLevels] = {&g_noLane, &g_noLane, &g_noLane,
                                         &g_noLane, &g_noLane, &g_noLane};
};
//
// Its TLS model: code in an executable (not position-independent, or
// position-independent but an executable) finds it at a constant offset from
// the thread pointer (local-exec: the executable's own definition is the one
// every module uses, as the dynamic linker binds the library's references to
// it); code in a shared object finds it through its GOT (initial-exec).
#if !defined(__PIC__) || defined(__PIE__)
#define MUON_ROUTE_TLS_MODEL "local-exec"
#else
#define MUON_ROUTE_TLS_MODEL "initial-exec"
#endif
inline thread_local ThreadRoute t_route __attribute__((tls_model(MUON_ROUTE_TLS_MODEL)));
#undef MUON_ROUTE_TLS_MODEL
// How many fields the calling thread's LogContexts hold together (LogFields.h).
inline thread_local size_t t_contextFields __attribute__((tls_model("initial-exec"))) = 0;

// Whether a line's time is its counter reading (Logger's clock is
// TscClock's, on the counter): else a statement reads the clock (Logging.cc).
bool clockIsTheCounter() noexcept;
// Resolves the calling thread's route from the current configuration, the
// clock and the thread's LogContext fields (Logging.cc). While a statement
// writes in place, the route stays, to be resolved at a later statement.
void resolveThreadRoute() noexcept;
// For tests: how many slots the calling thread's statements hold now (0
// between statements).
unsigned statementSlotsInUse();
// Resolves the thread's route again at its next statement (its queues are
// gone, or its LogContext fields changed).
inline void forgetThreadRoute() { t_route.generation = 0; }

class Statement;

// What a Recorder guarantees is free after its pointer when it is made, and
// the longest string operand stored (longer ones are cut to it: a line
// holds fewer bytes, so the line is the same).
inline constexpr size_t kRecorderRoom = 1024;
// The room a record in place has: its largest size, less a word that a
// store may write past the last operand (writeTextHead).
inline constexpr size_t kRecordRoom = RecordLane::kMaxStatement - 8;
inline constexpr size_t kMaxStoredString = 0xffff;

// The statement's operands being recorded: the record begins at `start`
// (its header), `used` bytes of it are written, and it has `room` bytes in
// all, at least B of them free. Carried by value along the chain of <<, so
// that the common path keeps it in registers; `used` stays a constant
// there while the operands' sizes are (a literal, numbers), and so does
// the record's size. L is the statement's level. The slow paths read the
// statement's site from the record's header, and where the record began
// from the thread's slots (Statement.cc): the common path carries neither.
template <size_t B, int L>
struct Recorder {
  char* start;
  size_t used;
  size_t room;
  RecordLane* lane;  // open by this statement, or g_noLane
};

// Opens `lane` for a statement at `site` if a record of the largest size may
// start at `at`, its write position: marks it open and writes the counter
// and the site into the record's header. False, with nothing changed, where
// it may not (g_noLane never lets one).
__attribute__((always_inline)) inline bool openLane(RecordLane* lane, char* at, const LogSite* site) {
  if (__builtin_expect(at > lane->limit, 0)) return false;
  lane->write = reinterpret_cast<char*>(lane->openMark);
  TscClock::storeCounter(at + offsetof(RecordHeader, key));
  std::memcpy(at + offsetof(RecordHeader, site), &site, sizeof site);
  return true;
}

// Publishes the statement record of `used` bytes at `start`, where `lane`
// writes (open by the statement, or at its limit at most): its header's
// first word (size, length, kind and level), then its end.
__attribute__((always_inline)) inline void publishRecord(RecordLane* lane, char* start, size_t used,
                                                         int level) {
  const uint64_t size = (used + 7) & ~uint64_t{7};
  const uint64_t first = size | uint64_t{used - sizeof(RecordHeader)} << 32 |
                         uint64_t{RecordHeader::kStatementCount} << 48 |
                         uint64_t{static_cast<unsigned>(level)} << 56;
  std::memcpy(start, &first, sizeof first);
  lane->write = start + size;
  lane->published.store(start + size, std::memory_order_release);
}

// Where a record goes on: a slow path's answer.
struct RecordPlace {
  char* start;
  size_t room;
  RecordLane* lane;  // the lane it is in place in, which this statement opened, or g_noLane
};
// Where beginSlow started a record, with its header (the counter and the
// site) written: in place in `lane`, or in a slot of the thread's (lane
// g_noLane). Either has kRecordRoom bytes at least; a slot has more, which
// moveToScratch gives a record that needs it. Two words, so that it comes
// back in registers, and the room a constant on both paths.
struct RecordStart {
  char* start;
  RecordLane* lane;
};

// One LOG_* statement's scope (the for statement of MUON_LOG_AT_IF): its
// site, and where its record began, so that its destructor can end what an
// exception thrown by an operand left open. Only inline code touches it,
// so it lives in registers; the slow paths keep what they need in the
// thread's slots (Statement.cc), found by where the record is now.
class Statement {
 public:
  __attribute__((always_inline)) explicit Statement(LogSite& s) : site(&s) {}
  __attribute__((always_inline)) ~Statement() {
    if (__builtin_expect(origin_ != nullptr, 0)) abandon(origin_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  LogSite* const site;
  // Whether the statement is still to run (the inner for of MUON_LOG_AT_IF).
  bool pending = true;

  template <int Level>
  __attribute__((always_inline)) Recorder<kRecorderRoom, Level> begin() {
    const ThreadRoute& route = t_route;
    if (__builtin_expect(route.generation == g_routeGeneration.load(std::memory_order_relaxed), 1)) {
      RecordLane* lane = route.lanes[Level];
      char* start = lane->write;
      if (__builtin_expect(openLane(lane, start, site), 1)) {
        origin_ = start;
        return {start, sizeof(RecordHeader), kRecordRoom, lane};
      }
    }
    // A record begins with its header, wherever it is: `used` stays a
    // constant on both paths.
    const RecordStart place = beginSlow(site, Level);
    origin_ = place.start;
    return {place.start, sizeof(RecordHeader), kRecordRoom, place.lane};
  }

  // Ends a statement whose operands were all recorded: publishes the
  // record in place, or takes the slow path. The lane is open only by
  // this statement (one nested in its operands has ended, and one that
  // began while another wrote in place disturbed the lane).
  template <size_t B, int L>
  __attribute__((always_inline)) void commit(const Recorder<B, L>& r) {
    RecordLane* lane = r.lane;
    if (__builtin_expect(lane->write == reinterpret_cast<char*>(RecordLane::kLaneOpen), 1)) {
      publishRecord(lane, r.start, r.used, L);
    } else {
      commitSlow(L, r.start, r.used);
    }
    origin_ = nullptr;
  }
  // Ends a statement that became a Logger (an operand the recorder does not store).
  void commitLogger() {
    char* origin = origin_;
    origin_ = nullptr;
    endLogger(origin);
  }

  // An operand of `size` bytes does not fit in B: where it goes, with
  // kRecorderRoom bytes free after it.
  template <size_t B, int L>
  __attribute__((always_inline)) static Recorder<B, L> roomFor(Recorder<B, L> r, size_t size) {
    if (__builtin_expect(r.room - r.used >= size + kRecorderRoom, 1)) return r;
    const RecordPlace place = moveToScratch(r.start, r.used, size);
    r.start = place.start;
    r.room = place.room;
    r.lane = &g_noLane;
    return r;
  }
  // From here on the statement is a Logger's: the operands recorded so far
  // are replayed into its stream, which takes the rest.
  template <size_t B, int L>
  static LogStream& toStream(const Recorder<B, L>& r) {
    return becomeLogger(L, r.start, r.used);
  }

 private:
  // Out of line (Statement.cc). A record begun by the slow path: in the
  // lane after the route is resolved again, or in a slot of the thread's.
  static RecordStart beginSlow(const LogSite* site, int level) noexcept;
  // beginSlow's other cases: the route to resolve, the lane at its limit.
  __attribute__((noinline)) static RecordStart beginAnew(const LogSite* site, int level) noexcept;
  // The record at `start` with `used` bytes, with room for `size` more and
  // kRecorderRoom: in its slot, or on the heap (it may stay where it is).
  static RecordPlace moveToScratch(char* start, size_t used, size_t size) noexcept;
  // A Logger in the record's slot that formats the operands recorded so far
  // and writes the line when it ends (endLogger).
  static LogStream& becomeLogger(int level, char* start, size_t used) noexcept;
  // Ends the statement whose record began at `origin`.
  static void endLogger(char* origin) noexcept;
  static void commitSlow(int level, char* start, size_t used) noexcept;
  // commitSlow's case of a record in place while the thread makes its own
  // lines (Statement.cc).
  static bool commitFormatting(RecordLane* lane, int level, char* start, size_t used) noexcept;
  static void abandon(char* origin) noexcept;

  char* origin_ = nullptr;  // the record's first place while the statement runs
};

// The left operand of `&` in the LOG_* macros ends the statement, whatever
// its chain of << made of it.
template <size_t B, int L>
__attribute__((always_inline)) inline void operator&(Statement& s, const Recorder<B, L>& r) {
  s.commit(r);
}
inline void operator&(Statement& s, LogStream&) { s.commitLogger(); }

// ---- operands ----

// Whether the recorder stores T itself; anything else goes to a Logger's stream.
template <typename T>
struct RecordsItself
    : std::integral_constant<bool, std::is_arithmetic<T>::value ||
                                       std::is_same<T, std::string>::value ||
                                       std::is_same<T, std::string_view>::value ||
                                       std::is_same<T, const char*>::value ||
                                       std::is_same<T, char*>::value ||
                                       std::is_same<T, const void*>::value ||
                                       std::is_same<T, void*>::value> {};

// A value of known size: tag and bytes, checked only where B cannot cover it.
template <size_t B, int L, typename V>
__attribute__((always_inline)) inline auto recordValue(Recorder<B, L> r, OperandTag tag, V v) {
  constexpr size_t kSize = 1 + sizeof(V);
  if constexpr (kSize > B) r = Statement::roomFor(r, kSize);
  char* p = r.start + r.used;
  *p = static_cast<char>(tag);
  std::memcpy(p + 1, &v, sizeof v);
  if constexpr (kSize <= B) {
    return Recorder<B - kSize, L>{r.start, r.used + kSize, r.room, r.lane};
  } else {
    return Recorder<kRecorderRoom, L>{r.start, r.used + kSize, r.room, r.lane};
  }
}

// A byte operand's tag and 16-bit length as a little-endian word: its
// kOperandBytesHeader low bytes are the operand's first.
constexpr uint32_t bytesHead(OperandTag tag, size_t len) {
  return tag | static_cast<uint32_t>(len) << 8;
}
// The head as one four-byte store (its fourth byte is the operand's first,
// written next, or free room).
__attribute__((always_inline)) inline void writeBytesHead(char* p, OperandTag tag, size_t len) {
  const uint32_t head = bytesHead(tag, len);
  std::memcpy(p, &head, sizeof head);
}
__attribute__((always_inline)) inline void writeTextHead(char* p, size_t len) {
  writeBytesHead(p, kOperandText, len);
}

// A byte operand of run-time length: checked, keeping B free after it.
template <size_t B, int L>
__attribute__((always_inline)) inline Recorder<B, L> recordBytes(Recorder<B, L> r, OperandTag tag,
                                                              const char* s, size_t len) {
  if (__builtin_expect(len > kMaxStoredString, 0)) len = kMaxStoredString;
  const size_t size = kOperandBytesHeader + len;
  // roomFor leaves kRecorderRoom >= B free after the bytes.
  r = Statement::roomFor(r, size);
  char* p = r.start + r.used;
  writeBytesHead(p, tag, len);
  copyOperandBytes(p + kOperandBytesHeader, s, len);
  r.used += size;
  return r;
}
// A string operand (escaped when replayed).
template <size_t B, int L>
__attribute__((always_inline)) inline Recorder<B, L> recordString(Recorder<B, L> r, const char* s,
                                                               size_t len) {
  return recordBytes(r, kOperandText, s, len);
}

// How an arithmetic operand is stored: as LogStream records it (a char as
// a char; smaller integers widened to 32 bits; long double as a double).
template <typename T>
constexpr OperandTag operandTagOf() {
  if constexpr (std::is_same_v<T, char>) {
    return kOperandChar;
  } else if constexpr (std::is_floating_point_v<T>) {
    return sizeof(T) == sizeof(float) ? kOperandF32 : kOperandF64;
  } else if constexpr (sizeof(T) <= sizeof(int32_t)) {
    return std::is_signed_v<T> ? kOperandI32 : kOperandU32;
  } else {
    static_assert(sizeof(T) <= sizeof(uint64_t), "LogStream takes no wider integer");
    return std::is_signed_v<T> ? kOperandI64 : kOperandU64;
  }
}
template <OperandTag kTag>
using StoredOperand = std::conditional_t<
    kTag == kOperandChar, char,
    std::conditional_t<
        kTag == kOperandF32, float,
        std::conditional_t<
            kTag == kOperandF64, double,
            std::conditional_t<kTag == kOperandI32, int32_t,
                               std::conditional_t<kTag == kOperandU32, uint32_t,
                                                  std::conditional_t<kTag == kOperandI64, int64_t,
                                                                     uint64_t>>>>>>;

template <size_t B, int L, typename T,
          typename = std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>>>
__attribute__((always_inline)) inline auto operator<<(Recorder<B, L> r, T v) {
  constexpr OperandTag kTag = operandTagOf<T>();
  return recordValue(r, kTag, static_cast<StoredOperand<kTag>>(v));
}
template <size_t B, int L>
__attribute__((always_inline)) inline auto operator<<(Recorder<B, L> r, bool v) {
  return recordValue(r, kOperandChar, v ? '1' : '0');
}
template <size_t B, int L>
__attribute__((always_inline)) inline auto operator<<(Recorder<B, L> r, const void* v) {
  return recordValue(r, kOperandPtr, reinterpret_cast<uint64_t>(v));
}
template <size_t B, int L>
__attribute__((always_inline)) inline auto operator<<(Recorder<B, L> r, void* v) {
  return recordValue(r, kOperandPtr, reinterpret_cast<uint64_t>(v));
}
template <size_t B, int L>
__attribute__((always_inline)) inline Recorder<B, L> operator<<(Recorder<B, L> r, const std::string& s) {
  return recordString(r, s.data(), s.size());
}
template <size_t B, int L>
__attribute__((always_inline)) inline Recorder<B, L> operator<<(Recorder<B, L> r, std::string_view s) {
  return recordString(r, s.data(), s.size());
}

// A literal's operand as its bytes are stored (its tag, its 16-bit length
// and its M - 1 bytes) in 64-bit words the compiler knows, so that the
// operand is a few stores of constants (adjacent ones merged into wider
// stores) rather than a head and a copy. The last word's bytes past the
// operand are free room, which the next operand writes over.
template <size_t I, size_t M>
__attribute__((always_inline)) inline uint64_t literalByte(const char (&s)[M], OperandTag tag) {
  constexpr size_t kLength = M - 1;
  if constexpr (I < kOperandBytesHeader) {
    return (bytesHead(tag, kLength) >> (8 * I)) & 0xff;
  } else if constexpr (I - kOperandBytesHeader < kLength) {
    return static_cast<unsigned char>(s[I - kOperandBytesHeader]);
  } else {
    return 0;
  }
}
template <size_t K, size_t M, size_t... Bytes>
__attribute__((always_inline)) inline uint64_t literalWord(const char (&s)[M], OperandTag tag,
                                                          std::index_sequence<Bytes...>) {
  return ((literalByte<8 * K + Bytes>(s, tag) << (8 * Bytes)) | ...);
}
// A literal's tag: kOperandRaw where none of its bytes is one a line
// escapes (below 0x20, or DEL), so that no formatter scans it again; the
// bytes are constants, so the test folds away at compile time, as a text
// statement's own check of a literal does (LogStream::appendText). Where
// the compiler does not fold it, kOperandText: scanned when replayed.
template <size_t M, size_t... I>
__attribute__((always_inline)) inline OperandTag literalTag(const char (&s)[M],
                                                           std::index_sequence<I...>) {
  const bool control = (false | ... | isControlByte(static_cast<unsigned char>(s[I])));
  return __builtin_constant_p(control) && !control ? kOperandRaw : kOperandText;
}
template <size_t M, size_t... Words>
__attribute__((always_inline)) inline void storeLiteral(char* p, const char (&s)[M],
                                                       std::index_sequence<Words...>) {
  const OperandTag tag = literalTag(s, std::make_index_sequence<M - 1>());
  const uint64_t words[] = {literalWord<Words>(s, tag, std::make_index_sequence<8>())...};
  std::memcpy(p, words, sizeof words);
}
// The longest operand stored as a literal's words.
inline constexpr size_t kMaxLiteralWords = 8;

// A char array (a literal, mostly): at most M - 1 bytes, a size known at
// compile time, so no check while B covers it. A literal (its bytes known
// to the compiler, with no NUL before its end) is stored as its words
// (storeLiteral); any other array has its length taken and its bytes copied.
template <size_t B, int L, size_t M>
__attribute__((always_inline)) inline auto operator<<(Recorder<B, L> r, const char (&s)[M]) {
  constexpr size_t kSize = kOperandBytesHeader + (M > 0 ? M - 1 : 0);
  // What the stores may write: whole words.
  constexpr size_t kWide = (kSize + 7) & ~size_t{7};
  constexpr bool kMayBeWords = kWide / 8 <= kMaxLiteralWords;
  if constexpr (kWide > kRecorderRoom) {
    return recordString(r, s, std::strlen(s));
  } else {
    if constexpr (kWide > B) r = Statement::roomFor(r, kWide);
    char* p = r.start + r.used;
    size_t len;
    if (kMayBeWords && __builtin_constant_p(std::strlen(s)) && std::strlen(s) == M - 1) {
      storeLiteral(p, s, std::make_index_sequence<kMayBeWords ? kWide / 8 : 1>());
      len = M - 1;
    } else {
      len = std::strlen(s);
      writeTextHead(p, len);
      std::memcpy(p + kOperandBytesHeader, s, len);
    }
    const size_t used = r.used + kOperandBytesHeader + len;
    if constexpr (kWide <= B) {
      return Recorder<B - kSize, L>{r.start, used, r.room, r.lane};
    } else {
      return Recorder<kRecorderRoom, L>{r.start, used, r.room, r.lane};
    }
  }
}

// A C string: "(null)" for a null pointer, as LogStream writes it.
template <size_t B, int L, typename T,
          typename = std::enable_if_t<std::is_same<T, const char*>::value ||
                                      std::is_same<T, char*>::value>>
__attribute__((always_inline)) inline Recorder<B, L> operator<<(Recorder<B, L> r, const T& s) {
  if (s == nullptr) return recordString(r, "(null)", 6);
  return recordString(r, s, std::strlen(s));
}

// Object pointers print as hex, as const void* does.
template <size_t B, int L, typename T,
          typename = std::enable_if_t<!std::is_same<std::remove_cv_t<T>, char>::value &&
                                      !std::is_function<T>::value>>
__attribute__((always_inline)) inline auto operator<<(Recorder<B, L> r, T* v) {
  return recordValue(r, kOperandPtr, reinterpret_cast<uint64_t>(v));
}

// A field (muon::kv) whose value the recorder stores: its start (the
// name, cut as LogStream cuts it) and its value, as LogStream records them
// (a field of one operand: no end).
template <typename T>
inline constexpr bool kRecordedField =
    std::is_same_v<T, bool> || (std::is_arithmetic_v<T> && !std::is_same_v<T, long double>) ||
    std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view> ||
    std::is_same_v<T, const char*> || std::is_same_v<T, char*> ||
    (std::is_array_v<T> && std::is_same_v<std::remove_cv_t<std::remove_extent_t<T>>, char>);
template <size_t B, int L, typename T, typename = std::enable_if_t<kRecordedField<T>>>
__attribute__((always_inline)) inline auto operator<<(Recorder<B, L> r, const ::muon::KeyValue<T>& field) {
  const std::string_view name = field.name;
  const OperandTag tag = kBareField<T> ? kOperandFieldOneBare : kOperandFieldOneText;
  const Recorder<B, L> named =
      recordBytes(r, tag, name.data(), name.size() < kMaxFieldName ? name.size() : kMaxFieldName);
  if constexpr (std::is_same_v<T, bool>) {
    return field.value ? recordBytes(named, kOperandRaw, "true", 4)
                       : recordBytes(named, kOperandRaw, "false", 5);
  } else {
    return named << field.value;
  }
}

// Anything else LogStream takes (kv, Fmt, a user's operator<<(LogStream&,
// T), an enum, a function pointer): the statement goes on as a Logger's.
template <size_t B, int L, typename T,
          typename = std::enable_if_t<!RecordsItself<std::decay_t<T>>::value &&
                                      !std::is_pointer<std::decay_t<T>>::value>>
inline auto operator<<(Recorder<B, L> r, const T& v) -> decltype(std::declval<LogStream&>() << v) {
  return Statement::toStream(r) << v;
}
// Function pointers, which decay to pointers.
template <size_t B, int L, typename R, typename... Args>
inline LogStream& operator<<(Recorder<B, L> r, R (*f)(Args...)) {
  return Statement::toStream(r) << f;
}
template <size_t B, int L>
inline LogStream& operator<<(Recorder<B, L> r, std::nullptr_t) {
  return Statement::toStream(r) << nullptr;
}


}  // namespace detail
}  // namespace muon
