// libFuzzer target for LogStream and Fmt: the input is a program of
// operations (value kind + value), run against a LogStream and a std::string
// model of what it must hold.
//
// Invariants checked after every operation:
//  - length() <= kMessageEnd (the rest is kept for fields and the line's
//    end), and the text equals the model;
//  - a string is cut at the message's end, never elsewhere, and nothing is
//    written after a cut (truncated());
//  - a number (integer, floating, pointer, Fmt) is written whole or not at
//    all, and what was written parses back to the same value.
//  - the same operations recorded (LogOperands.h) and replayed, or
//    recorded until they no longer fit and then written as text, give the
//    same text.
// Writes past the buffer are caught by ASan: the LogStream is on the heap,
// and its buffer is its last member, so one byte too far lands in a redzone.
#include <fuzzer/FuzzedDataProvider.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "FuzzCheck.h"
#include "muon/base/internal/LogOperands.h"
#include "muon/base/LogStream.h"

namespace {

using muon::Fmt;
using muon::LogStream;

// What `s` holds past `before` bytes, after one operation.
std::string appended(const LogStream& s, size_t before) {
  std::string_view all = s.buffer().toStringView();
  return std::string(all.substr(before));
}

class Checker {
 public:
  Checker() : stream_(std::make_unique<LogStream>()), recorded_(std::make_unique<LogStream>()) {
    startRecording();
  }

  // The text must be the model, and the model must fit.
  void checkBuffer() const {
    const LogStream::Buffer& b = stream_->buffer();
    FUZZ_CHECK(b.length() <= LogStream::kMessageEnd);
    FUZZ_CHECK(b.avail() == (stream_->truncated() ? 0 : LogStream::kMessageEnd - b.length()));
    FUZZ_CHECK(b.toStringView() == model_);
    // The recording stream, replayed (or fallen back to text), says the same.
    if (recorded_->recording()) {
      auto replayed = std::make_unique<LogStream>();
      const LogStream::Buffer& r = recorded_->buffer();
      FUZZ_CHECK(muon::detail::replayOperands(r.data(), r.length(), *replayed));
      FUZZ_CHECK(replayed->buffer().toStringView() == model_);
    } else {
      FUZZ_CHECK(recorded_->buffer().toStringView() == model_);
    }
  }

  // A number is all there or not at all; `parsesBack` checks the text.
  template <typename Write, typename Parse>
  void number(Write write, Parse parsesBack) {
    size_t before = model_.size();
    const size_t roomBefore = room();
    write(*stream_);
    write(*recorded_);
    std::string text = appended(*stream_, before);
    if (!text.empty()) {
      FUZZ_CHECK(parsesBack(text));
    }
    FUZZ_CHECK(text.size() <= roomBefore);
    model_ += text;
    checkBuffer();
  }

  // Raw: the bytes, cut at the end only. Escaped (the default): each
  // control byte as its escape, an escape written whole or not at all.
  void string(const std::string& s) {
    size_t before = model_.size();
    size_t room = this->room();
    *stream_ << s;
    *recorded_ << s;
    std::string text = appended(*stream_, before);
    std::string want;
    if (LogStream::controlCharacters() == LogStream::kRaw) {
      want = s.substr(0, room);
    } else {
      for (char ch : s) {
        std::string piece = escaped(static_cast<unsigned char>(ch));
        if (want.size() + piece.size() > room) break;
        want += piece;
      }
    }
    FUZZ_CHECK(text == want);
    model_ += text;
    checkBuffer();
  }

  static std::string escaped(unsigned char c) {
    if ((c >= 0x20 && c != 0x7f) || c == '\t') return std::string(1, static_cast<char>(c));
    if (c == '\n') return "\\n";
    if (c == '\r') return "\\r";
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    return hex;
  }

  void reset() {
    stream_->resetBuffer();
    recorded_ = std::make_unique<LogStream>();
    startRecording();
    model_.clear();
    checkBuffer();
  }

  // What the message may still take: nothing once it was cut.
  size_t room() const {
    return stream_->truncated() ? 0 : LogStream::kMessageEnd - model_.size();
  }

 private:
  // A line with no header: falling back to text writes nothing first.
  void startRecording() {
    recorded_->startRecording([](void*, LogStream&) {}, nullptr);
  }

  std::unique_ptr<LogStream> stream_;
  std::unique_ptr<LogStream> recorded_;
  std::string model_;
};

template <typename T>
bool parsesAsSigned(const std::string& text, T v) {
  char* end = nullptr;
  errno = 0;
  long long back = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && back == static_cast<long long>(v);
}

template <typename T>
bool parsesAsUnsigned(const std::string& text, T v) {
  if (!text.empty() && text[0] == '-') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long back = std::strtoull(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && back == static_cast<unsigned long long>(v);
}

// "Shortest text that reads back as the same value": same bits (so -0 stays
// -0), or both NaN.
bool parsesAsDouble(const std::string& text, double v) {
  char* end = nullptr;
  double back = std::strtod(text.c_str(), &end);
  if (*end != '\0') return false;
  if (std::isnan(v)) return std::isnan(back);
  return std::memcmp(&back, &v, sizeof v) == 0;
}

// A double's text is std::to_chars's, whichever way LogStream made it.
bool isToChars(const std::string& text, double v) {
  char want[64];
  auto result = std::to_chars(want, want + sizeof want, v);
  return text == std::string(want, result.ptr);
}

bool parsesAsFloat(const std::string& text, float v) {
  char* end = nullptr;
  float back = std::strtof(text.c_str(), &end);
  if (*end != '\0') return false;
  if (std::isnan(v)) return std::isnan(back);
  return std::memcmp(&back, &v, sizeof v) == 0;
}

void fmt(Checker& c, FuzzedDataProvider& in) {
  // Fmt's result is at most kMaxLength chars, and goes in whole or not at all.
  auto check = [&c](const Fmt& f, const std::string& expectedPrefix) {
    FUZZ_CHECK(f.length() <= Fmt::kMaxLength);
    FUZZ_CHECK(std::string(f.data(), f.length()) == expectedPrefix.substr(0, f.length()));
    c.number([&f](LogStream& s) { s << f; },
             [&f](const std::string& text) { return text == std::string(f.data(), f.length()); });
  };
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {
      long long v = in.ConsumeIntegral<long long>();
      check(Fmt("%lld", v), std::to_string(v));
      break;
    }
    case 1: {
      std::string s = in.ConsumeRandomLengthString(200);
      // Fmt copies up to the first NUL, as printf does.
      check(Fmt("<%s>", s.c_str()), "<" + std::string(s.c_str()) + ">");
      break;
    }
    default: {
      int precision = in.ConsumeIntegralInRange<int>(0, 60);
      double v = in.ConsumeFloatingPoint<double>();
      char full[512];
      std::snprintf(full, sizeof full, "%.*e", precision, v);
      check(Fmt("%.*e", precision, v), full);
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  // The control-character policy, for this input (restored at the end).
  LogStream::setControlCharacters(in.ConsumeBool() ? LogStream::kRaw : LogStream::kEscape);
  Checker c;
  while (in.remaining_bytes() > 0) {
    switch (in.ConsumeIntegralInRange<int>(0, 13)) {
      case 0: {
        long long v = in.ConsumeIntegral<long long>();
        c.number([v](LogStream& s) { s << v; },
                 [v](const std::string& t) { return parsesAsSigned(t, v); });
        break;
      }
      case 1: {
        unsigned long long v = in.ConsumeIntegral<unsigned long long>();
        c.number([v](LogStream& s) { s << v; },
                 [v](const std::string& t) { return parsesAsUnsigned(t, v); });
        break;
      }
      case 2: {
        int v = in.ConsumeIntegral<int>();
        c.number([v](LogStream& s) { s << v; },
                 [v](const std::string& t) { return parsesAsSigned(t, v); });
        break;
      }
      case 3: {
        short v = in.ConsumeIntegral<short>();
        c.number([v](LogStream& s) { s << v; },
                 [v](const std::string& t) { return parsesAsSigned(t, v); });
        break;
      }
      case 4: {
        // int8_t is a number here, not a character.
        signed char v = in.ConsumeIntegral<signed char>();
        c.number([v](LogStream& s) { s << v; },
                 [v](const std::string& t) { return parsesAsSigned(t, v); });
        break;
      }
      case 5: {
        unsigned char v = in.ConsumeIntegral<unsigned char>();
        c.number([v](LogStream& s) { s << v; },
                 [v](const std::string& t) { return parsesAsUnsigned(t, v); });
        break;
      }
      case 6: {
        // Raw bits, so NaNs, infinities and subnormals all come up.
        uint64_t bits = in.ConsumeIntegral<uint64_t>();
        double v;
        std::memcpy(&v, &bits, sizeof v);
        c.number([v](LogStream& s) { s << v; },
                 [v](const std::string& t) { return parsesAsDouble(t, v) && isToChars(t, v); });
        break;
      }
      case 7: {
        uint32_t bits = in.ConsumeIntegral<uint32_t>();
        float v;
        std::memcpy(&v, &bits, sizeof v);
        c.number([v](LogStream& s) { s << v; },
                 [v](const std::string& t) { return parsesAsFloat(t, v); });
        break;
      }
      case 8: {
        uintptr_t v = in.ConsumeIntegral<uintptr_t>();
        const void* p = reinterpret_cast<const void*>(v);
        c.number([p](LogStream& s) { s << p; },
                 [v](const std::string& t) {
                   if (t.size() < 3 || t.compare(0, 2, "0x") != 0) return false;
                   char* end = nullptr;
                   return std::strtoull(t.c_str() + 2, &end, 16) == v && *end == '\0';
                 });
        break;
      }
      case 9:
        c.string(in.ConsumeRandomLengthString(in.ConsumeBool() ? 64 : 8192));
        break;
      case 10: {
        // Fill to a chosen distance from the end, where cutting happens.
        size_t leave = in.ConsumeIntegralInRange<size_t>(0, 50);
        if (c.room() > leave) c.string(std::string(c.room() - leave, 'x'));
        break;
      }
      case 11: {
        char ch = in.ConsumeIntegral<char>();
        bool b = in.ConsumeBool();
        c.number([ch, b](LogStream& s) { s << ch << b; },
                 [ch, b](const std::string& t) {
                   std::string want{ch, b ? '1' : '0'};
                   return t == want || t == want.substr(0, 1);
                 });
        break;
      }
      case 12:
        fmt(c, in);
        break;
      default:
        c.reset();
        break;
    }
  }
  c.checkBuffer();
  LogStream::setControlCharacters(LogStream::kEscape);
  return 0;
}
