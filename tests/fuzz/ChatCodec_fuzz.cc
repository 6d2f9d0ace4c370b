// libFuzzer target for the chat example's length-header codec: bytes from a
// client, arriving in pieces of any size. The messages it cuts must be
// exactly those a plain reading of the whole stream finds, in order, and a
// bad length must stop it at the same place.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>
#include <vector>

#include "FuzzCheck.h"
#include "LengthHeaderCodec.h"

namespace {

using Codec = chat::LengthHeaderCodec;

// The model: messages of a whole stream, and whether it ends on a bad length.
std::vector<std::string> model(const std::string& stream, bool* bad) {
  std::vector<std::string> out;
  *bad = false;
  size_t pos = 0;
  while (stream.size() - pos >= 4) {
    uint32_t be = (static_cast<uint32_t>(static_cast<unsigned char>(stream[pos])) << 24) |
                  (static_cast<uint32_t>(static_cast<unsigned char>(stream[pos + 1])) << 16) |
                  (static_cast<uint32_t>(static_cast<unsigned char>(stream[pos + 2])) << 8) |
                  static_cast<uint32_t>(static_cast<unsigned char>(stream[pos + 3]));
    int32_t len = static_cast<int32_t>(be);
    if (len < 0 || len > Codec::kMaxMessageLength) {
      *bad = true;
      break;
    }
    if (stream.size() - pos - 4 < static_cast<size_t>(len)) break;
    out.push_back(stream.substr(pos + 4, static_cast<size_t>(len)));
    pos += 4 + static_cast<size_t>(len);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  muon::net::Buffer buf;
  std::string stream;
  std::vector<std::string> got;
  bool sawBad = false;
  while (fdp.remaining_bytes() > 0 && !sawBad) {
    std::string piece = fdp.ConsumeRandomLengthString(70000);
    stream += piece;
    buf.append(piece);
    std::string message;
    int32_t badLength = 0;
    for (;;) {
      Codec::Cut c = Codec::cut(&buf, &message, &badLength);
      if (c == Codec::Cut::kIncomplete) break;
      if (c == Codec::Cut::kBadLength) {
        FUZZ_CHECK(badLength < 0 || badLength > Codec::kMaxMessageLength);
        sawBad = true;
        break;
      }
      got.push_back(message);
    }
  }
  bool bad = false;
  std::vector<std::string> want = model(stream, &bad);
  FUZZ_CHECK(got == want);
  FUZZ_CHECK(sawBad == bad);
  return 0;
}
