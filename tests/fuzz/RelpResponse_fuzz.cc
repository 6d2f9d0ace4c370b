// libFuzzer target for the RELP client's reading side: bytes a server (or
// an attacker posing as one) sends, cut into frames by RelpParser and the
// rsp data read by parseResponse. Properties:
//  - the same bytes give the same frames, the same error and the same error
//    offset whether fed whole, one byte at a time (each byte its own heap
//    block, so ASan catches a read past it) or in chunks of any size;
//  - the parser never takes more bytes than it is given;
//  - every frame keeps to RELP's limits and the parser's data limit;
//  - a frame encoded again parses to itself;
//  - a parsed response's code is three digits and its parts lie inside the data.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "FuzzCheck.h"
#include "muon/net/relp/RelpFrame.h"
#include "muon/net/relp/RelpParser.h"
#include "muon/net/relp/RelpResponse.h"

namespace {

using muon::net::relp::RelpFrameData;
using muon::net::relp::RelpParser;

struct Outcome {
  std::vector<RelpFrameData> frames;
  RelpParser::Error error = RelpParser::Error::kNone;
  uint64_t errorOffset = 0;
  uint64_t taken = 0;
};

bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Feeds [data, data + size) in pieces of `chunk` bytes (0: whole), each
// copied to a heap block of exactly its size.
Outcome feed(const uint8_t* data, size_t size, size_t chunk, size_t maxData) {
  RelpParser parser(maxData);
  Outcome out;
  size_t pos = 0;
  while (pos < size) {
    const size_t n = chunk == 0 ? size - pos : std::min(chunk, size - pos);
    std::unique_ptr<char[]> piece(new char[n]);
    std::memcpy(piece.get(), data + pos, n);
    size_t begin = 0;
    while (begin < n) {
      size_t consumed = 0;
      RelpParser::Status s = parser.parse(piece.get() + begin, n - begin, &consumed);
      FUZZ_CHECK(consumed <= n - begin);
      begin += consumed;
      out.taken += consumed;
      FUZZ_CHECK(parser.offset() == out.taken);
      if (s == RelpParser::Status::kFrame) {
        FUZZ_CHECK(consumed > 0);
        out.frames.push_back(parser.frame());
      } else if (s == RelpParser::Status::kError) {
        out.error = parser.error();
        out.errorOffset = parser.offset();
        FUZZ_CHECK(out.error != RelpParser::Error::kNone);
        return out;
      } else {
        FUZZ_CHECK(begin == n);
      }
    }
    pos += n;
  }
  return out;
}

bool same(const Outcome& a, const Outcome& b) {
  if (a.error != b.error || a.errorOffset != b.errorOffset || a.frames.size() != b.frames.size()) {
    return false;
  }
  for (size_t i = 0; i < a.frames.size(); ++i) {
    const RelpFrameData& x = a.frames[i];
    const RelpFrameData& y = b.frames[i];
    if (x.txnr != y.txnr || x.command != y.command || x.data != y.data) return false;
  }
  return true;
}

void checkFrame(const RelpFrameData& f, size_t maxData) {
  FUZZ_CHECK(f.txnr <= muon::net::relp::kMaxTxnr);
  FUZZ_CHECK(!f.command.empty() && f.command.size() <= muon::net::relp::kMaxCommandLength);
  for (char c : f.command) FUZZ_CHECK(isLetter(c));
  FUZZ_CHECK(f.data.size() <= maxData);
  // Encoded again (canonical numbers), it parses to itself.
  const std::string again = muon::net::relp::encodeFrame(f.txnr, f.command, f.data);
  RelpParser parser(maxData);
  size_t consumed = 0;
  FUZZ_CHECK(parser.parse(again.data(), again.size(), &consumed) == RelpParser::Status::kFrame);
  FUZZ_CHECK(consumed == again.size());
  FUZZ_CHECK(parser.frame().txnr == f.txnr && parser.frame().command == f.command &&
             parser.frame().data == f.data);
  muon::net::relp::RelpResponse rsp;
  if (muon::net::relp::parseResponse(f.data, &rsp)) {
    FUZZ_CHECK(rsp.code >= 100 && rsp.code <= 999);
    const char* begin = f.data.data();
    const char* end = begin + f.data.size();
    FUZZ_CHECK(rsp.text.empty() || (rsp.text.data() >= begin && rsp.text.data() + rsp.text.size() <= end));
    FUZZ_CHECK(rsp.text.find('\n') == std::string_view::npos);
    FUZZ_CHECK(rsp.commandData.empty() ||
               (rsp.commandData.data() >= begin && rsp.commandData.data() + rsp.commandData.size() <= end));
    muon::net::relp::hasOffer(rsp.commandData, "commands", "syslog");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The first byte picks the parser's data limit: small ones reach the
  // limit's edge, 0 the default.
  const size_t maxData = data[0] == 0 ? RelpParser::kDefaultMaxDataLength : data[0];
  const size_t chunk = 1 + data[0] % 13;
  ++data;
  --size;
  Outcome whole = feed(data, size, 0, maxData);
  FUZZ_CHECK(same(whole, feed(data, size, 1, maxData)));
  FUZZ_CHECK(same(whole, feed(data, size, chunk, maxData)));
  for (const RelpFrameData& f : whole.frames) checkFrame(f, maxData);
  return 0;
}
