// RelpParser: cuts RELP frames (RelpFrame.h) out of a byte stream that
// arrives in pieces of any size, such as the bytes a RELP server sends its
// client. It never reads outside the bytes it is given, keeps at most
// maxDataLength bytes of one frame, and reports a malformed stream as a
// value (Error) at the byte that makes it so; the stream is then beyond
// repair (RELP's answer to a framing error is to drop the connection), and
// the parser says so until reset().
//
// Feeding the same bytes in any split gives the same frames and the same
// error. Not thread-safe: one stream, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "muon/net/relp/RelpFrame.h"

namespace muon {
namespace net {
namespace relp {

struct RelpFrameData {
  uint32_t txnr = 0;
  std::string command;
  std::string data;
};

class RelpParser {
 public:
  enum class Status {
    kNeedMore,  // every byte given was taken; the frame is not finished
    kFrame,     // a whole frame is in frame(); bytes after it were not taken
    kError,     // the stream is malformed: error() says how
  };
  enum class Error {
    kNone,
    kBadTxnr,         // TXNR missing, not a digit, or more than 9 digits
    kBadCommand,      // COMMAND missing, not a letter, or more than 32 letters
    kBadDataLength,   // DATALEN missing, not a digit, or more than 9 digits
    kDataTooLong,     // DATALEN above maxDataLength
    kBadSeparator,    // no SP between DATALEN and DATA
    kBadTrailer,      // the byte after DATA is not LF
  };

  // 128 KiB: RELP's own limit for a frame's data in version 1, and far
  // more than any response of a server needs.
  static constexpr size_t kDefaultMaxDataLength = 128 * 1024;

  explicit RelpParser(size_t maxDataLength = kDefaultMaxDataLength)
      : maxDataLength_(maxDataLength < kMaxDataLength ? maxDataLength : kMaxDataLength) {}

  // Takes bytes from [data, data + len) until one frame is complete, the
  // bytes run out, or the stream turns out malformed; *consumed says how
  // many were taken (on kError: up to and including the bad byte). After
  // kFrame the next call starts a new frame; after kError every call
  // returns kError and takes nothing.
  Status parse(const char* data, size_t len, size_t* consumed);

  // The frame of the last kFrame (moved from freely until the next parse).
  RelpFrameData& frame() { return frame_; }
  Error error() const { return error_; }
  // Bytes taken since the stream began (since construction or reset()).
  uint64_t offset() const { return offset_; }
  size_t maxDataLength() const { return maxDataLength_; }
  void reset();

  static const char* errorName(Error e);

 private:
  enum class State { kTxnr, kCommand, kDataLength, kData, kTrailer, kFailed };

  Status fail(Error e);

  const size_t maxDataLength_;
  State state_ = State::kTxnr;
  Error error_ = Error::kNone;
  size_t digits_ = 0;    // of the number being read, or letters of the command
  size_t dataLength_ = 0;
  uint64_t offset_ = 0;
  bool frameDone_ = false;  // frame_ is the last one returned; cleared on the next parse
  RelpFrameData frame_;
};

}  // namespace relp
}  // namespace net
}  // namespace muon
