// TlsContext: TLS for a TcpServer's or TcpClient's connections, with
// OpenSSL.
//
//   std::string error;
//   auto tls = muon::net::TlsContext::newServer(options, &error);
//   if (!tls) { ...error says why... }
//   server.setTransportLayer(tls);   // the one line that encrypts
//
// A context is a server's or a client's: its certificate, key and trusted
// CAs loaded once (OpenSSL's SSL_CTX), shared by every connection it makes
// in every loop thread. Each connection gets a TlsTransport (TlsTransport.h)
// over the engine's own transport: the connection callback runs after the
// handshake; send(), shutdown() (close_notify) and the message callback's
// Buffer carry plaintext as on plain TCP. Made in any thread; immutable
// afterwards and safe to share.
#pragma once

#include <openssl/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "muon/net/TlsOptions.h"
#include "muon/net/internal/Transport.h"

// <openssl/ssl.h>'s own typedef, repeated so this header need not include it.
typedef struct ssl_session_st SSL_SESSION;

namespace muon {
namespace net {

class TlsContext : public TransportLayer, public std::enable_shared_from_this<TlsContext> {
 public:
  // nullptr when the options cannot be used (a file missing, a key that
  // does not match its certificate...), with *error saying which and why.
  static std::shared_ptr<TlsContext> newServer(const TlsServerOptions& options, std::string* error);
  static std::shared_ptr<TlsContext> newClient(const TlsClientOptions& options, std::string* error);

  ~TlsContext() override;
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // TransportLayer: a TlsTransport around the engine's transport.
  std::unique_ptr<Transport> newTransport(const Transport::Parts& parts) override;

  bool isServer() const { return server_; }
  double handshakeTimeoutSeconds() const { return handshakeTimeoutSeconds_; }

 private:
  TlsContext(SSL_CTX* ctx, bool server, const TlsOptions& options);
  static std::shared_ptr<TlsContext> make(const TlsOptions& options, const TlsServerOptions* server,
                                          const TlsClientOptions* client, std::string* error);
  // The client's session cache: the last session a server gave us, offered
  // by the next connection (OpenSSL calls newSession in the loop thread of
  // the connection that got it).
  static int newSession(SSL* ssl, SSL_SESSION* session);
  SSL_SESSION* takeSessionForResumption() const;  // a reference for the caller

  SSL_CTX* const ctx_;
  const bool server_;
  const double handshakeTimeoutSeconds_;
  const bool resumption_;
  std::string alpn_;        // our protocols, in ALPN's wire format
  std::string serverName_;  // client: the name to check; "" for the address
  bool verifyServerName_ = false;
  mutable std::mutex mutex_;
  SSL_SESSION* lastSession_ = nullptr;  // guarded by mutex_; client only
};

}  // namespace net
}  // namespace muon
