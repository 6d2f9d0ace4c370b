// LogOperands: a statement's << operands as typed bytes, and back to text.
//
// When a LOG_* statement's line is to be formatted later, by AsyncLogging's
// backend thread (Logging.h, "deferred formatting"), its LogStream records each
// operand as a tag byte and the value's bytes instead of the value's text:
//
//   kChar  c                      one byte
//   kI32 / kU32 / kF32  v         four bytes, the value's own representation
//   kI64 / kU64 / kF64 / kPtr  v  eight bytes
//   kText / kRaw / kWhole  n s    a 16-bit length, then n bytes
//   kFieldText / kFieldBare  n s  a field's start (muon::kv): its name
//   kFieldEnd  0                  its end (a zero byte)
//   kFieldOneText / kFieldOneBare  n s
//                                 the start of a field whose value is the
//                                 one operand after it: no end record
//
// kText is a string operand (escaped when replayed, as LogStream escapes
// it), kRaw bytes written as they are (LogStream::append, and a literal
// known to hold nothing to escape: Statement.h), kWhole a piece
// written whole or not at all (Fmt). The operands between a field's start
// and end are its value; kFieldText's value came from strings, kFieldBare's
// from numbers, bools or Fmt (Logfmt.h tells them apart in the line); the
// kFieldOne tags likewise, for a value of one operand (kv of a number, a
// bool, a string or Fmt: one record less). Values are in the machine's byte
// order: the bytes never leave the machine that wrote them (a crash-safe spool's
// records are read by a later process there, LogSpool.h).
//
// replayOperands() feeds the recorded operands, in order, to a LogStream in
// text mode through the same operator<< a direct statement uses, so that a
// deferred line is byte for byte the line the statement would have made.
//
// This is an internal header of LogStream and of the deferred path. Pure
// functions: any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace muon {

class LogStream;

namespace detail {

enum OperandTag : uint8_t {
  kOperandChar = 1,
  kOperandI32,
  kOperandU32,
  kOperandF32,
  kOperandI64,
  kOperandU64,
  kOperandF64,
  kOperandPtr,
  kOperandText,
  kOperandRaw,
  kOperandWhole,
  kOperandFieldText,
  kOperandFieldBare,
  kOperandFieldEnd,
  kOperandFieldOneText,
  kOperandFieldOneBare,
};

// A byte operand's tag and length in front of its bytes.
inline constexpr size_t kOperandBytesHeader = 3;

// Appends the operands in [p, p+n) to `out` as text. False, with what came
// before it appended, at an unknown tag or an operand that runs past n. A
// field may be left open (the statement goes on, or the bytes lost its
// end): whoever ends the line calls out.closeFields() first.
bool replayOperands(const char* p, size_t n, LogStream& out);
// replayOperands' writer, a friend of LogStream (OperandReplay.h).
struct OperandReplay;

}  // namespace detail
}  // namespace muon
