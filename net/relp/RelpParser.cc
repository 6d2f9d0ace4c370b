#include "muon/net/relp/RelpParser.h"

#include <algorithm>

namespace muon {
namespace net {
namespace relp {

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
}  // namespace

void RelpParser::reset() {
  state_ = State::kTxnr;
  error_ = Error::kNone;
  digits_ = 0;
  dataLength_ = 0;
  offset_ = 0;
  frame_ = RelpFrameData();
  frameDone_ = false;
}

RelpParser::Status RelpParser::fail(Error e) {
  state_ = State::kFailed;
  error_ = e;
  return Status::kError;
}

RelpParser::Status RelpParser::parse(const char* data, size_t len, size_t* consumed) {
  if (frameDone_) {
    frame_ = RelpFrameData();
    frameDone_ = false;
  }
  size_t i = 0;
  Status status = Status::kNeedMore;
  while (i < len && status == Status::kNeedMore) {
    if (state_ == State::kFailed) break;
    if (state_ == State::kData) {
      // The bulk of a frame: copied as a run, not byte by byte.
      size_t run = std::min(len - i, dataLength_ - frame_.data.size());
      frame_.data.append(data + i, run);
      i += run;
      if (frame_.data.size() == dataLength_) state_ = State::kTrailer;
      continue;
    }
    const char c = data[i++];
    switch (state_) {
      case State::kTxnr:
        if (isDigit(c) && digits_ < kMaxNumberDigits) {
          frame_.txnr = frame_.txnr * 10 + static_cast<uint32_t>(c - '0');
          ++digits_;
        } else if (c == ' ' && digits_ > 0) {
          state_ = State::kCommand;
          digits_ = 0;
        } else {
          status = fail(Error::kBadTxnr);
        }
        break;
      case State::kCommand:
        if (isLetter(c) && frame_.command.size() < kMaxCommandLength) {
          frame_.command.push_back(c);
        } else if (c == ' ' && !frame_.command.empty()) {
          state_ = State::kDataLength;
          dataLength_ = 0;
        } else {
          status = fail(Error::kBadCommand);
        }
        break;
      case State::kDataLength:
        if (isDigit(c) && digits_ < kMaxNumberDigits) {
          dataLength_ = dataLength_ * 10 + static_cast<size_t>(c - '0');
          ++digits_;
          if (dataLength_ > maxDataLength_) status = fail(Error::kDataTooLong);
        } else if (isDigit(c) || digits_ == 0) {  // a tenth digit, or none
          status = fail(Error::kBadDataLength);
        } else if (dataLength_ == 0) {
          // No data: the trailer follows the length at once.
          if (c == '\n') {
            status = Status::kFrame;
          } else {
            status = fail(Error::kBadTrailer);
          }
        } else if (c == ' ') {
          frame_.data.reserve(dataLength_);
          state_ = State::kData;
        } else {
          status = fail(Error::kBadSeparator);
        }
        break;
      case State::kTrailer:
        if (c == '\n') {
          status = Status::kFrame;
        } else {
          status = fail(Error::kBadTrailer);
        }
        break;
      case State::kData:
      case State::kFailed:
        break;
    }
  }
  if (state_ == State::kFailed) status = Status::kError;
  if (status == Status::kFrame) {
    state_ = State::kTxnr;
    digits_ = 0;
    frameDone_ = true;
  }
  offset_ += i;
  *consumed = i;
  return status;
}

const char* RelpParser::errorName(Error e) {
  switch (e) {
    case Error::kNone: return "no error";
    case Error::kBadTxnr: return "bad transaction number";
    case Error::kBadCommand: return "bad command";
    case Error::kBadDataLength: return "bad data length";
    case Error::kDataTooLong: return "data length above the limit";
    case Error::kBadSeparator: return "no space before the data";
    case Error::kBadTrailer: return "no LF after the data";
  }
  return "unknown error";
}

}  // namespace relp
}  // namespace net
}  // namespace muon
