// The pingpong pair's TLS settings, one place for muon's programs: TLS 1.3
// with AES-128-GCM only, the cipher Asio's twins are set to as well, so the
// benchmark compares the frameworks and not two ciphers.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "muon/net/TlsContext.h"

namespace muon {
namespace examples {

constexpr const char* kPingpongCipher = "TLS_AES_128_GCM_SHA256";

// CERT and KEY for the server, CA for the client; nullptr (after a message
// on stderr naming `program`) when they cannot be used.
inline std::shared_ptr<net::TlsContext> pingpongServerTls(const char* program, const char* cert,
                                                          const char* key) {
  net::TlsServerOptions options;
  options.certificateChainFile = cert;
  options.privateKeyFile = key;
  options.minVersion = net::TlsVersion::kTls13;
  options.cipherSuites = kPingpongCipher;
  std::string error;
  std::shared_ptr<net::TlsContext> tls = net::TlsContext::newServer(options, &error);
  if (!tls) std::fprintf(stderr, "%s: %s\n", program, error.c_str());
  return tls;
}

inline std::shared_ptr<net::TlsContext> pingpongClientTls(const char* program, const char* ca) {
  net::TlsClientOptions options;
  options.caFile = ca;
  options.minVersion = net::TlsVersion::kTls13;
  options.cipherSuites = kPingpongCipher;
  std::string error;
  std::shared_ptr<net::TlsContext> tls = net::TlsContext::newClient(options, &error);
  if (!tls) std::fprintf(stderr, "%s: %s\n", program, error.c_str());
  return tls;
}

}  // namespace examples
}  // namespace muon
