// The logfmt encoder (LineFormat::kLogfmt): a record as one logfmt line,
//
//   time=2026-11-21T08:15:02.123456Z level=INFO thread=4321 msg=login
//   file=auth.cc line=42 user=alice ms=12                          (one line)
//
// the time RFC 3339 in UTC to the microsecond; TRACE and DEBUG lines add
// func=<function> after the thread. Every value is in the logfmt form
// fields have (Logfmt.h): bare, or quoted with its escapes where it must
// be, so that any logfmt parser gets each value's bytes back. The fields
// follow as the line holds them; one named as a part of the line (time,
// level, thread, func, msg, file, line) is written fields.<name>.
#include <cstring>
#include <string>

#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/Logfmt.h"

namespace muon {
namespace detail {

namespace {

class LogfmtWriter {
 public:
  explicit LogfmtWriter(char* p) : p_(p) {}
  char* end() const { return p_; }

  template <size_t N>
  void literal(const char (&s)[N]) {
    raw(s, N - 1);
  }
  void raw(const char* s, size_t n) {
    if (n == 0) return;  // an empty view's data() may be null
    std::memcpy(p_, s, n);
    p_ += n;
  }
  void raw(std::string_view s) { raw(s.data(), s.size()); }
  void integer(long long v) { p_ += convertDecimal(p_, v); }
  // The bytes of `a` and `b`, one text value, in their logfmt form. The
  // caller gives it room for 2 + 6 bytes per byte.
  void value(std::string_view a, std::string_view b = std::string_view()) {
    if (!b.empty()) {  // a message's piece that did not read as fields: rare
      thread_local std::string joined;
      joined.assign(a.data(), a.size());
      joined.append(b.data(), b.size());
      a = joined;
    }
    p_ += writeLogfmtValue(p_, a.data(), a.size(), true);
  }

 private:
  char* p_;
};

}  // namespace

bool isReservedLogfmtKey(std::string_view name) {
  // By length first: most names are passed with no compare at all.
  switch (name.size()) {
    case 3:
      return name == "msg";
    case 4:
      return name == "time" || name == "func" || name == "file" || name == "line";
    case 5:
      return name == "level";
    case 6:
      return name == "thread";
    default:
      return false;
  }
}

size_t logfmtCapacity(const LogRecord& record) {
  // Text 6 bytes a byte at most (\u00XX) and its quotes; a field of n >= 4
  // bytes (" a=1") adds at most "fields.", 7 <= 2 n.
  return 128 + 6 * (record.function.size() + record.message.size() + record.file.size()) +
         3 * record.fields.size();
}

size_t encodeLogfmt(const LogRecord& record, char* out) {
  LogfmtWriter w(out);
  w.literal("time=");
  char* p = w.end();
  p += writeUtcSecond(p, record.time.secondsSinceEpoch());
  writeMicro(p, record.time.microSecondsInSecond());
  p += 6;
  std::memcpy(p, "Z level=", 8);
  w = LogfmtWriter(p + 8);
  const int level = record.level < kLevelCount ? record.level : kLevelCount - 1;
  w.raw(levelName(level));
  w.literal(" thread=");
  w.integer(record.tid);
  if (!record.function.empty()) {
    w.literal(" func=");
    w.value(record.function);
  }
  auto field = [&w](const LogField& f) {
    if (isReservedLogfmtKey(f.name)) {
      w.literal(" fields.");
    } else {
      w.literal(" ");
    }
    w.raw(f.name);
    w.literal("=");
    w.raw(f.value);  // in its logfmt form already
  };
  auto messageAndFile = [&](const MessageAndFields& m) {
    w.literal(" msg=");
    w.value(m.message, m.kept);
    if (!record.file.empty()) {
      w.literal(" file=");
      w.value(record.file);
      w.literal(" line=");
      w.integer(record.line);
    }
  };
  messageThenFields(record, messageAndFile, field);
  w.literal("\n");
  return static_cast<size_t>(w.end() - out);
}

}  // namespace detail
}  // namespace muon
