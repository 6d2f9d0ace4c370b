// InetAddress: an IPv4 or IPv6 socket address (sockaddr_in / sockaddr_in6).
// A value type: cheap to copy, safe to use from any thread.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace muon {
namespace net {

class InetAddress {
 public:
  // Any address ("0.0.0.0" / "::") or the loopback one, with `port`;
  // port 0 lets bind(2) pick a free port.
  explicit InetAddress(uint16_t port = 0, bool loopbackOnly = false, bool ipv6 = false);
  // A numeric address: "1.2.3.4" or "::1". An address containing ':' is
  // taken as IPv6 even if ipv6 is false. A malformed `ip` is logged at ERROR
  // and leaves the any-address; use parse() to get the error as a value.
  InetAddress(std::string_view ip, uint16_t port, bool ipv6 = false);
  explicit InetAddress(const struct sockaddr_in& addr) : addr_{} { addr_.v4 = addr; }
  explicit InetAddress(const struct sockaddr_in6& addr) : addr_{} { addr_.v6 = addr; }

  // "1.2.3.4:80", "[::1]:80" (numeric only). False if it does not parse.
  static bool parse(std::string_view hostPort, InetAddress* out);
  // Resolves a host name with getaddrinfo (thread-safe, blocking; do not call
  // it from a loop thread that serves connections). The port of *out is kept.
  // Prefers IPv4 unless preferIpv6. False if the name does not resolve
  // (the resolver's reason is logged as an error).
  static bool resolve(std::string_view hostname, InetAddress* out, bool preferIpv6 = false);
  // The same, with the resolver's reason ("Name or service not known") in
  // *error instead of the log.
  static bool resolve(std::string_view hostname, InetAddress* out, std::string* error,
                      bool preferIpv6 = false);

  sa_family_t family() const { return addr_.v4.sin_family; }
  bool isIpv6() const { return family() == AF_INET6; }
  std::string toIp() const;
  // "1.2.3.4:80" or "[::1]:80".
  std::string toIpPort() const;
  uint16_t port() const { return ntohs(portNetEndian()); }

  const struct sockaddr* getSockAddr() const { return reinterpret_cast<const struct sockaddr*>(&addr_); }
  socklen_t sockLen() const {
    return isIpv6() ? static_cast<socklen_t>(sizeof addr_.v6) : static_cast<socklen_t>(sizeof addr_.v4);
  }
  void setSockAddrInet6(const struct sockaddr_in6& addr6) { addr_.v6 = addr6; }
  uint32_t ipv4NetEndian() const;  // IPv4 only
  uint16_t portNetEndian() const { return addr_.v4.sin_port; }  // same offset in both

  friend bool operator==(const InetAddress& a, const InetAddress& b);
  friend bool operator!=(const InetAddress& a, const InetAddress& b) { return !(a == b); }

 private:
  // sockaddr_in6 is the larger of the two; family tells which one is live.
  union {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
  } addr_;
};

}  // namespace net
}  // namespace muon
