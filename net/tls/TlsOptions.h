// TlsServerOptions, TlsClientOptions: what a TlsContext is made from.
//
// Plain values, read once by TlsContext::newServer / newClient; the
// defaults are the safe ones (the peer's certificate and name checked, TLS
// 1.2 at least). Files are PEM. See docs/net.md, "TLS".
#pragma once

#include <string>
#include <vector>

namespace muon {
namespace net {

enum class TlsVersion { kTls12, kTls13 };

// What both sides have.
struct TlsOptions {
  // Our certificate chain (leaf first, then intermediates) and its private
  // key. A server needs them; a client only for mutual authentication.
  std::string certificateChainFile;
  std::string privateKeyFile;
  // Whom we trust to sign the peer's certificate: a file of CA
  // certificates and/or a directory hashed by `openssl rehash`. Both empty:
  // the system's store (/etc/ssl/certs).
  std::string caFile;
  std::string caPath;
  // The lowest version spoken. TLS 1.3 is preferred whenever both sides
  // have it; 1.2 stays allowed because rsyslog and older peers may lack 1.3.
  TlsVersion minVersion = TlsVersion::kTls12;
  // Cipher suites in OpenSSL's syntax: TLS 1.3's ("TLS_AES_128_GCM_SHA256")
  // and TLS 1.2's ("ECDHE+AESGCM"); empty: OpenSSL's defaults.
  std::string cipherSuites;
  std::string cipherList;
  // ALPN protocols in order of preference ("http/1.1"); empty: no ALPN.
  std::vector<std::string> alpn;
  // Session resumption (tickets): a reconnecting client skips the full
  // handshake's public-key work.
  bool sessionResumption = true;
  // A peer that has not completed the handshake by then is dropped: a
  // connection that stalls mid-handshake (slow loris) costs at most this.
  double handshakeTimeoutSeconds = 10.0;
};

struct TlsServerOptions : TlsOptions {
  // Mutual authentication: every client must present a certificate signed
  // by caFile / caPath. Off by default, as on the web.
  bool requireClientCertificate = false;
};

struct TlsClientOptions : TlsOptions {
  // The server's certificate must chain to caFile / caPath (or the system
  // store). Turning it off makes TLS worthless against anyone on the path;
  // it exists for tests and diagnosis only.
  bool verifyServer = true;
  // The name the server's certificate must carry, also sent as SNI: a host
  // name ("logs.example.com") or an IP address. Empty: the address
  // connected to, so a certificate must name it.
  std::string serverName;
};

}  // namespace net
}  // namespace muon
