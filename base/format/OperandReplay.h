// OperandReplay: the recorded operands (LogOperands.h) back into a
// LogStream, for the code that makes a line of every deferred record (the
// backend's formatter, a crowded statement's own line), where the call
// would cost the line more than its body. Everyone else calls
// replayOperands(). An internal header of the deferred path. Pure
// functions: any thread.
#pragma once

#include <cstring>
#include <string_view>
#include <type_traits>

#include "muon/base/internal/LogOperands.h"
#include "muon/base/LogStream.h"

namespace muon {
namespace detail {

template <typename T>
inline T loadOperand(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline bool isNumberTag(uint8_t tag) { return tag >= kOperandI32 && tag <= kOperandPtr; }

// One switch on the tag per operand, each case checking its own length: the
// replay runs once per deferred line on the backend, so its per-operand cost
// is the backend's. A struct LogStream befriends, for its private writers.
//
// The switch writes to a LogStream, or to a PlainText: the plain run, which
// a line's operands take first, up to the first that needs the stream's own
// writers (a field's part, text with a byte to escape, bytes that are not a
// whole operand). It writes what the stream would write, at the stream's end,
// without the stream's checks: the stream has room for all of it
// (takesPlainRun), and no state but its bytes changes for such operands.
struct OperandReplay {
  struct PlainText {
    char* to;
    // Every operand byte becomes at most this many bytes of text: a float's
    // five (tag and value) the most, up to 15 ("-1.17549435e-38"), then an
    // int's five, up to 11.
    static constexpr size_t kMostTextPerByte = 3;
    // takesPlainRun keeps a number's scratch free after the run's text:
    // room for any number's text.
    static_assert(LogStream::kMaxNumericSize >= kMaxFloatingSize &&
                      LogStream::kMaxNumericSize >= 21,  // convertDecimal's
                  "");

    PlainText& operator<<(char c) {
      *to++ = c;
      return *this;
    }
    PlainText& operator<<(int v) { return number(convertDecimal(to, static_cast<long long>(v))); }
    PlainText& operator<<(unsigned v) {
      return number(convertDecimal(to, static_cast<unsigned long long>(v)));
    }
    PlainText& operator<<(long long v) { return number(convertDecimal(to, v)); }
    PlainText& operator<<(unsigned long long v) { return number(convertDecimal(to, v)); }
    PlainText& operator<<(float v) { return number(convertFloat(to, v)); }
    PlainText& operator<<(double v) { return number(convertDouble(to, v)); }
    PlainText& operator<<(const void* v) {
      return number(convertHex(to, reinterpret_cast<uintptr_t>(v)));
    }
    void append(const char* data, size_t len) {
      copyBytes(to, data, len);
      to += len;
    }
    PlainText& number(size_t written) {
      to += written;
      return *this;
    }
  };
  template <typename Out>
  static constexpr bool kPlain = std::is_same_v<Out, PlainText>;

  // Whether `out` takes the plain run of n operand bytes: a text line's
  // stream, outside any field, with room for all of their text and a
  // number's scratch after it, so that no write can reach the message's
  // end.
  static bool takesPlainRun(const LogStream& out, size_t n) {
    return !out.recording_ && out.fieldDepth_ == 0 &&
           out.buffer_.avail() >= PlainText::kMostTextPerByte * n + LogStream::kMaxNumericSize;
  }

  // A number stored as T at v (after its tag; `left` bytes from the tag
  // on), streamed as As: where the next operand begins, or nullptr.
  template <typename T, typename As = T, typename Out>
  __attribute__((always_inline)) static const char* value(const char* v, size_t left, Out& out) {
    if (left < 1 + sizeof(T)) return nullptr;
    const T stored = loadOperand<T>(v);
    if constexpr (std::is_pointer_v<As>) {
      out << reinterpret_cast<As>(stored);
    } else {
      out << static_cast<As>(stored);
    }
    return v + sizeof(T);
  }

  // The bytes of the length-prefixed operand at p (`left` bytes from its
  // tag on); data is nullptr if they are not all there.
  struct Bytes {
    const char* data;
    size_t len;
  };
  __attribute__((always_inline)) static Bytes bytesOf(const char* p, size_t left) {
    if (left < kOperandBytesHeader) return {nullptr, 0};
    const size_t len = loadOperand<uint16_t>(p + 1);
    if (left - kOperandBytesHeader < len) return {nullptr, 0};
    return {p + kOperandBytesHeader, len};
  }

  // A kText (escaped: kEscape) or kRaw operand at p: where the next one
  // begins, or nullptr.
  template <bool kEscape, typename Out>
  __attribute__((always_inline)) static const char* stringOperand(const char* p, size_t left,
                                                                  Out& out) {
    const Bytes b = bytesOf(p, left);
    if (b.data == nullptr) return nullptr;
    if constexpr (kPlain<Out>) {
      // The stream's: escaping, or the policy that keeps control bytes.
      if (kEscape && __builtin_expect(mayHoldControl(b.data, b.len), 0)) return nullptr;
      out.append(b.data, b.len);
    } else if constexpr (kEscape) {
      out.appendText(b.data, b.len);
    } else {
      out.append(b.data, b.len);
    }
    return b.data + b.len;
  }

  // The operand at p, other than a kFieldOne start, into `out`; where the
  // next one begins, or nullptr if the bytes do not hold a whole operand (or,
  // into a PlainText, one that needs the stream's writers).
  template <typename Out>
  __attribute__((always_inline)) static const char* plain(const char* p, const char* end,
                                                          Out& out) {
    const auto left = static_cast<size_t>(end - p);
    const char* v = p + 1;
    switch (static_cast<uint8_t>(*p)) {
      case kOperandChar:
        if (left < 2) return nullptr;
        out << *v;
        return v + 1;
      case kOperandFieldEnd:
        if constexpr (kPlain<Out>) {
          return nullptr;
        } else {
          if (left < 2) return nullptr;
          out.endField();
          return v + 1;
        }
      case kOperandI32:
        return value<int32_t>(v, left, out);
      case kOperandU32:
        return value<uint32_t>(v, left, out);
      case kOperandF32:
        return value<float>(v, left, out);
      case kOperandI64:
        return value<int64_t, long long>(v, left, out);
      case kOperandU64:
        return value<uint64_t, unsigned long long>(v, left, out);
      case kOperandF64:
        return value<double>(v, left, out);
      case kOperandPtr:
        return value<uint64_t, const void*>(v, left, out);
      // Strings, each kind its own case: no compare of the tag after the switch.
      case kOperandText:
        return stringOperand<true>(p, left, out);
      case kOperandRaw:
        return stringOperand<false>(p, left, out);
      case kOperandWhole:
      case kOperandFieldText:
      case kOperandFieldBare: {
        const Bytes b = bytesOf(p, left);
        if (b.data == nullptr) return nullptr;
        const auto tag = static_cast<uint8_t>(*p);
        if constexpr (kPlain<Out>) {
          if (tag != kOperandWhole) return nullptr;
          out.append(b.data, b.len);
        } else if (tag == kOperandWhole) {
          out.appendWhole(b.data, b.len);
        } else {
          out.beginField(std::string_view(b.data, b.len), tag == kOperandFieldText);
        }
        return b.data + b.len;
      }
      default:
        return nullptr;
    }
  }

  // The operand at p, a kFieldOne start included: the starts in a row and
  // the one operand after them, which ends them all. (The bytes end after
  // such a start when the statement fell back to text there: it wrote the
  // value and ended the field itself.)
  __attribute__((always_inline)) static const char* one(const char* p, const char* end,
                                                        LogStream& out) {
    auto tag = static_cast<uint8_t>(*p);
    if (__builtin_expect(tag != kOperandFieldOneText && tag != kOperandFieldOneBare, 1)) {
      return plain(p, end, out);
    }
    unsigned open = 0;
    bool bare = false;
    do {
      const Bytes b = bytesOf(p, static_cast<size_t>(end - p));
      if (b.data == nullptr) return nullptr;
      // As one operand's field: a stream that records (a Logger replaying a
      // statement's operands) records it so, with no end.
      out.beginOneOperandField(std::string_view(b.data, b.len), tag == kOperandFieldOneText, false);
      ++open;
      bare = tag == kOperandFieldOneBare;
      p = b.data + b.len;
      if (p == end) return p;
      tag = static_cast<uint8_t>(*p);
    } while (tag == kOperandFieldOneText || tag == kOperandFieldOneBare);
    // A bare value that is a number needs no encoding.
    const bool number = bare && isNumberTag(tag);
    p = plain(p, end, out);
    if (p == nullptr) return nullptr;
    for (; open > 0; --open) out.endOneOperandField(number);
    return p;
  }
};

// replayOperands(), inlined where it is called: its plain run first, where
// the stream takes one, then the stream's writers from the first operand
// that needs them.
__attribute__((always_inline)) inline bool replayOperandsInline(const char* p, size_t n,
                                                                LogStream& out) {
  const char* const end = p + n;
  if (__builtin_expect(OperandReplay::takesPlainRun(out, n), 1)) {
    LogStream::Buffer& buf = out.buffer();
    OperandReplay::PlainText text{buf.current()};
    while (p < end) {
      const char* next = OperandReplay::plain(p, end, text);
      if (next == nullptr) break;
      p = next;
    }
    buf.add(static_cast<size_t>(text.to - buf.current()));
  }
  while (p < end) {
    p = OperandReplay::one(p, end, out);
    if (p == nullptr) return false;
  }
  return true;
}

}  // namespace detail
}  // namespace muon
