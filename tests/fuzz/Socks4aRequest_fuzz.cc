// libFuzzer target for the socks4a example's request parser: a stranger's
// first bytes. Whatever they are, the parser reads inside them, consumes no
// more than it was given, waits only while the request could still grow,
// and a request it accepts is version 4, CONNECT, with a host name exactly
// when the address is 0.0.0.x (x != 0).
#include <cstdint>
#include <string>

#include "FuzzCheck.h"
#include "Socks4aRequest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  // Fed whole, and also as it would arrive: growing one prefix at a time.
  for (size_t len : {size, size / 2, size > 9 ? size_t{9} : size}) {
    socks4a::Request request;
    size_t consumed = 0;
    const char* error = nullptr;
    socks4a::Parse r = socks4a::parseRequest(bytes, len, &request, &consumed, &error);
    FUZZ_CHECK(consumed <= len);
    if (r == socks4a::Parse::kIncomplete) {
      FUZZ_CHECK(len <= socks4a::kMaxRequest && consumed == 0);
    } else if (r == socks4a::Parse::kError) {
      FUZZ_CHECK(error != nullptr);
    } else {
      FUZZ_CHECK(error == nullptr && consumed >= 9 && bytes[0] == 4 && bytes[1] == 1);
      const unsigned char* ip = data + 4;
      FUZZ_CHECK(request.socks4a == (ip[0] == 0 && ip[1] == 0 && ip[2] == 0 && ip[3] != 0));
      FUZZ_CHECK(request.host.size() < consumed);
    }
  }
  return 0;
}
