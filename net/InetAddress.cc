#include "muon/net/InetAddress.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <cerrno>
#include <cstring>

#include "muon/base/Logging.h"

namespace muon {
namespace net {

static_assert(offsetof(sockaddr_in, sin_family) == offsetof(sockaddr_in6, sin6_family),
              "family() reads sin_family for both");
static_assert(offsetof(sockaddr_in, sin_port) == offsetof(sockaddr_in6, sin6_port),
              "portNetEndian() reads sin_port for both");

namespace {

// Fills *addr from a numeric ip; false if it does not parse.
bool fillFromIp(std::string_view ip, uint16_t port, bool ipv6, InetAddress* addr) {
  char buf[INET6_ADDRSTRLEN];
  if (ip.size() >= sizeof buf) return false;
  std::memcpy(buf, ip.data(), ip.size());
  buf[ip.size()] = '\0';
  if (ipv6 || ip.find(':') != std::string_view::npos) {
    struct sockaddr_in6 a6 {};
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons(port);
    if (::inet_pton(AF_INET6, buf, &a6.sin6_addr) != 1) return false;
    *addr = InetAddress(a6);
  } else {
    struct sockaddr_in a4 {};
    a4.sin_family = AF_INET;
    a4.sin_port = htons(port);
    if (::inet_pton(AF_INET, buf, &a4.sin_addr) != 1) return false;
    *addr = InetAddress(a4);
  }
  return true;
}

}  // namespace

InetAddress::InetAddress(uint16_t port, bool loopbackOnly, bool ipv6) : addr_{} {
  if (ipv6) {
    addr_.v6.sin6_family = AF_INET6;
    addr_.v6.sin6_addr = loopbackOnly ? in6addr_loopback : in6addr_any;
    addr_.v6.sin6_port = htons(port);
  } else {
    addr_.v4.sin_family = AF_INET;
    addr_.v4.sin_addr.s_addr = htonl(loopbackOnly ? INADDR_LOOPBACK : INADDR_ANY);
    addr_.v4.sin_port = htons(port);
  }
}

InetAddress::InetAddress(std::string_view ip, uint16_t port, bool ipv6)
    : InetAddress(port, false, ipv6 || ip.find(':') != std::string_view::npos) {
  if (!fillFromIp(ip, port, ipv6, this)) {
    LOG_ERROR << "InetAddress: '" << ip << "' is not a numeric IP address; using "
              << toIpPort();
  }
}

bool InetAddress::parse(std::string_view hostPort, InetAddress* out) {
  size_t colon = hostPort.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == hostPort.size()) return false;
  std::string_view host = hostPort.substr(0, colon);
  std::string_view portText = hostPort.substr(colon + 1);
  bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return false;  // an IPv6 address needs brackets: "[::1]:80"
  }
  unsigned port = 0;
  for (char c : portText) {
    if (c < '0' || c > '9') return false;
    port = port * 10 + static_cast<unsigned>(c - '0');
    if (port > 65535) return false;
  }
  return fillFromIp(host, static_cast<uint16_t>(port), bracketed, out);
}

bool InetAddress::resolve(std::string_view hostname, InetAddress* out, bool preferIpv6) {
  std::string error;
  if (resolve(hostname, out, &error, preferIpv6)) return true;
  LOG_ERROR << "InetAddress::resolve " << hostname << ": " << error;
  return false;
}

bool InetAddress::resolve(std::string_view hostname, InetAddress* out, std::string* error,
                          bool preferIpv6) {
  std::string host(hostname);
  struct addrinfo hints {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* result = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0) {
    *error = rc == EAI_SYSTEM ? std::string(strerror_tl(errno)) : std::string(::gai_strerror(rc));
    return false;
  }
  const struct addrinfo* chosen = nullptr;
  for (const struct addrinfo* ai = result; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    if (chosen == nullptr) chosen = ai;
    if ((ai->ai_family == AF_INET6) == preferIpv6) {
      chosen = ai;
      break;
    }
  }
  bool found = chosen != nullptr;
  if (found) {
    uint16_t port = out->port();
    if (chosen->ai_family == AF_INET6) {
      struct sockaddr_in6 a6;
      std::memcpy(&a6, chosen->ai_addr, sizeof a6);
      a6.sin6_port = htons(port);
      *out = InetAddress(a6);
    } else {
      struct sockaddr_in a4;
      std::memcpy(&a4, chosen->ai_addr, sizeof a4);
      a4.sin_port = htons(port);
      *out = InetAddress(a4);
    }
  }
  ::freeaddrinfo(result);
  if (!found) *error = "no IPv4 or IPv6 address";
  return found;
}

std::string InetAddress::toIp() const {
  char buf[INET6_ADDRSTRLEN] = "";
  if (isIpv6()) {
    ::inet_ntop(AF_INET6, &addr_.v6.sin6_addr, buf, sizeof buf);
  } else {
    ::inet_ntop(AF_INET, &addr_.v4.sin_addr, buf, sizeof buf);
  }
  return buf;
}

std::string InetAddress::toIpPort() const {
  std::string port = std::to_string(this->port());
  return isIpv6() ? "[" + toIp() + "]:" + port : toIp() + ":" + port;
}

uint32_t InetAddress::ipv4NetEndian() const {
  return family() == AF_INET ? addr_.v4.sin_addr.s_addr : 0;
}

bool operator==(const InetAddress& a, const InetAddress& b) {
  if (a.family() != b.family() || a.portNetEndian() != b.portNetEndian()) return false;
  if (a.isIpv6()) {
    return std::memcmp(&a.addr_.v6.sin6_addr, &b.addr_.v6.sin6_addr, sizeof(in6_addr)) == 0;
  }
  return a.addr_.v4.sin_addr.s_addr == b.addr_.v4.sin_addr.s_addr;
}

}  // namespace net
}  // namespace muon
