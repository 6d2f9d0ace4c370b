#include "muon/base/LogOperands.h"

#include <cstring>
#include <string_view>

#include "muon/base/LogStream.h"

namespace muon {
namespace detail {

namespace {

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The bytes a value of `tag` takes after its tag; 0 for a byte operand.
size_t valueSize(uint8_t tag) {
  switch (tag) {
    case kOperandChar:
    case kOperandFieldEnd:
      return 1;
    case kOperandI32:
    case kOperandU32:
    case kOperandF32:
      return 4;
    case kOperandI64:
    case kOperandU64:
    case kOperandF64:
    case kOperandPtr:
      return 8;
    default:
      return 0;
  }
}

}  // namespace

bool replayOperands(const char* p, size_t n, LogStream& out) {
  const char* const end = p + n;
  // One operand at p, p moved past it. A lambda has the function's access
  // (LogStream's friend).
  auto replayOne = [&]() -> bool {
    const auto tag = static_cast<uint8_t>(*p);
    if (tag >= kOperandText && tag <= kOperandFieldBare) {
      if (end - p < static_cast<ptrdiff_t>(kOperandBytesHeader)) return false;
      const size_t len = load<uint16_t>(p + 1);
      const char* bytes = p + kOperandBytesHeader;
      if (static_cast<size_t>(end - bytes) < len) return false;
      if (tag == kOperandText) {
        out.appendText(bytes, len);
      } else if (tag == kOperandWhole) {
        out.appendWhole(bytes, len);
      } else if (tag >= kOperandFieldText) {
        out.beginField(std::string_view(bytes, len), tag == kOperandFieldText);
      } else {
        out.append(bytes, len);
      }
      p = bytes + len;
      return true;
    }
    const size_t size = valueSize(tag);
    if (size == 0 || static_cast<size_t>(end - p) < 1 + size) return false;
    const char* v = p + 1;
    switch (tag) {
      case kOperandChar:
        out << *v;
        break;
      case kOperandFieldEnd:
        out.endField();
        break;
      case kOperandI32:
        out << load<int32_t>(v);
        break;
      case kOperandU32:
        out << load<uint32_t>(v);
        break;
      case kOperandF32:
        out << load<float>(v);
        break;
      case kOperandI64:
        out << static_cast<long long>(load<int64_t>(v));
        break;
      case kOperandU64:
        out << static_cast<unsigned long long>(load<uint64_t>(v));
        break;
      case kOperandF64:
        out << load<double>(v);
        break;
      default:  // kOperandPtr
        out << reinterpret_cast<const void*>(load<uint64_t>(v));
        break;
    }
    p = v + size;
    return true;
  };
  // Fields of one operand (kOperandFieldOne*) begun and not yet ended: the
  // operand after them ends them. (The bytes end after such a start when
  // the statement fell back to text there: it writes the value and ends the
  // field itself.)
  unsigned openOne = 0;
  bool bareOne = false;
  while (p < end) {
    const auto tag = static_cast<uint8_t>(*p);
    if (tag == kOperandFieldOneText || tag == kOperandFieldOneBare) {
      if (end - p < static_cast<ptrdiff_t>(kOperandBytesHeader)) return false;
      const size_t len = load<uint16_t>(p + 1);
      const char* bytes = p + kOperandBytesHeader;
      if (static_cast<size_t>(end - bytes) < len) return false;
      // As one operand's field: a stream that records (a Logger replaying a
      // statement's operands) records it so, with no end.
      out.beginOneOperandField(std::string_view(bytes, len), tag == kOperandFieldOneText, false);
      ++openOne;
      bareOne = tag == kOperandFieldOneBare;
      p = bytes + len;
      continue;
    }
    // A bare value that is a number needs no encoding.
    const bool number = bareOne && tag >= kOperandI32 && tag <= kOperandPtr;
    if (!replayOne()) return false;
    for (; openOne > 0; --openOne) out.endOneOperandField(number);
  }
  return true;
}

}  // namespace detail
}  // namespace muon
