// The SOCKS4 / SOCKS4a CONNECT request, parsed from bytes a client sent:
//   VN=4 | CD=1 | DSTPORT (2, network order) | DSTIP (4) | USERID ... \0
//   [SOCKS4a, when DSTIP is 0.0.0.x with x != 0: HOSTNAME ... \0]
// Pure: no I/O, no name resolution (the server resolves `host`), so the
// parser can be fed any bytes (tests/fuzz/Socks4aRequest_fuzz).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace socks4a {

constexpr size_t kMaxRequest = 1024;  // user id and host name together

struct Request {
  uint16_t portNet = 0;  // network order, as sent
  uint32_t ipNet = 0;
  bool socks4a = false;  // a host name follows the user id
  std::string host;      // SOCKS4a: the name to resolve (may be empty: it will not resolve)
};

enum class Parse { kIncomplete, kDone, kError };

// Parses the request at [begin, begin + len). kIncomplete: wait for more
// bytes. kDone: *request is set and *consumed bytes were the request.
// kError: *error says why (*consumed is then how much to drop, possibly all).
inline Parse parseRequest(const char* begin, size_t len, Request* request, size_t* consumed,
                          const char** error) {
  *consumed = 0;
  if (len < 9) return Parse::kIncomplete;
  const char* end = begin + len;
  const char* userEnd = static_cast<const char*>(std::memchr(begin + 8, '\0', len - 8));
  if (userEnd == nullptr) {
    if (len <= kMaxRequest) return Parse::kIncomplete;
    *error = "request too long";
    *consumed = len;
    return Parse::kError;
  }
  std::memcpy(&request->portNet, begin + 2, sizeof request->portNet);
  std::memcpy(&request->ipNet, begin + 4, sizeof request->ipNet);
  const unsigned char* ip = reinterpret_cast<const unsigned char*>(begin + 4);
  const char* requestEnd = userEnd + 1;
  request->host.clear();
  request->socks4a = false;
  if (ip[0] == 0 && ip[1] == 0 && ip[2] == 0 && ip[3] != 0) {  // SOCKS4a: a host name follows
    const char* hostEnd = static_cast<const char*>(
        std::memchr(requestEnd, '\0', static_cast<size_t>(end - requestEnd)));
    if (hostEnd == nullptr) {
      if (len <= kMaxRequest) return Parse::kIncomplete;
      *error = "request too long";
      *consumed = len;
      return Parse::kError;
    }
    request->socks4a = true;
    request->host.assign(requestEnd, hostEnd);
    requestEnd = hostEnd + 1;
  }
  *consumed = static_cast<size_t>(requestEnd - begin);
  if (begin[0] != 4 || begin[1] != 1) {
    *error = "not a SOCKS4 CONNECT";
    return Parse::kError;
  }
  return Parse::kDone;
}

}  // namespace socks4a
