#include "muon/net/TlsContext.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "muon/base/Logging.h"
#include "muon/net/InetAddress.h"
#include "muon/net/internal/SocketsOps.h"
#include "muon/net/internal/TlsTransport.h"

namespace muon {
namespace net {

namespace {

// The reasons in OpenSSL's error queue, for a setup step that failed.
std::string queuedErrors(const std::string& step) {
  std::string text = step;
  while (const unsigned long e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    text += ": ";
    text += reason != nullptr ? reason : "error " + std::to_string(ERR_GET_REASON(e));
  }
  return text;
}

bool isIpAddress(const std::string& name) {
  unsigned char buf[sizeof(struct in6_addr)];
  return ::inet_pton(AF_INET, name.c_str(), buf) == 1 || ::inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

// ALPN's wire format: each protocol prefixed with its length.
bool alpnWire(const std::vector<std::string>& protocols, std::string* wire) {
  for (const std::string& p : protocols) {
    if (p.empty() || p.size() > 255) return false;
    wire->push_back(static_cast<char>(p.size()));
    *wire += p;
  }
  return true;
}

// The server picks the first of its own protocols the client offers; none
// in common: no ALPN (the application may still refuse the connection).
int selectAlpn(SSL*, const unsigned char** out, unsigned char* outLen, const unsigned char* in,
               unsigned inLen, void* arg) {
  const auto* ours = static_cast<const std::string*>(arg);
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outLen, reinterpret_cast<const unsigned char*>(ours->data()),
                            static_cast<unsigned>(ours->size()), in, inLen) != OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

std::shared_ptr<TlsContext> TlsContext::newServer(const TlsServerOptions& options, std::string* error) {
  return make(options, &options, nullptr, error);
}

std::shared_ptr<TlsContext> TlsContext::newClient(const TlsClientOptions& options, std::string* error) {
  return make(options, nullptr, &options, error);
}

TlsContext::TlsContext(SSL_CTX* ctx, bool server, const TlsOptions& options)
    : ctx_(ctx),
      server_(server),
      handshakeTimeoutSeconds_(options.handshakeTimeoutSeconds),
      resumption_(options.sessionResumption) {}

TlsContext::~TlsContext() {
  SSL_SESSION_free(lastSession_);
  SSL_CTX_free(ctx_);
}

std::shared_ptr<TlsContext> TlsContext::make(const TlsOptions& options, const TlsServerOptions* server,
                                             const TlsClientOptions* client, std::string* error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(server != nullptr ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) {
    *error = queuedErrors("SSL_CTX_new");
    return nullptr;
  }
  // Owned from here on, freed with it whatever fails below.
  std::shared_ptr<TlsContext> context(new TlsContext(ctx, server != nullptr, options));
  SSL_CTX_set_app_data(ctx, context.get());
  auto failed = [error](const std::string& step) {
    *error = queuedErrors(step);
    return nullptr;
  };

  SSL_CTX_set_min_proto_version(
      ctx, options.minVersion == TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION);
  // Renegotiation (TLS 1.2) refused both ways: it re-opens a finished
  // handshake mid-stream, and a peer could make us pay for one at will.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  // OpenSSL's record buffers (16 KiB and more each way) go back to the heap
  // while a connection is idle: 10,000 idle connections would otherwise
  // hold them all.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  if (!options.cipherSuites.empty() && SSL_CTX_set_ciphersuites(ctx, options.cipherSuites.c_str()) != 1) {
    return failed("cipher suites '" + options.cipherSuites + "'");
  }
  if (!options.cipherList.empty() && SSL_CTX_set_cipher_list(ctx, options.cipherList.c_str()) != 1) {
    return failed("cipher list '" + options.cipherList + "'");
  }
  if (!options.certificateChainFile.empty() || !options.privateKeyFile.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, options.certificateChainFile.c_str()) != 1) {
      return failed("certificate chain " + options.certificateChainFile);
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, options.privateKeyFile.c_str(), SSL_FILETYPE_PEM) != 1) {
      return failed("private key " + options.privateKeyFile);
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return failed("private key " + options.privateKeyFile + " and certificate " +
                    options.certificateChainFile);
    }
  } else if (server != nullptr) {
    *error = "a TLS server needs certificateChainFile and privateKeyFile";
    return nullptr;
  }
  const bool verify = server != nullptr ? server->requireClientCertificate : client->verifyServer;
  if (verify) {
    const int rc = options.caFile.empty() && options.caPath.empty()
                       ? SSL_CTX_set_default_verify_paths(ctx)
                       : SSL_CTX_load_verify_locations(
                             ctx, options.caFile.empty() ? nullptr : options.caFile.c_str(),
                             options.caPath.empty() ? nullptr : options.caPath.c_str());
    if (rc != 1) return failed("CA " + options.caFile + options.caPath);
    int mode = SSL_VERIFY_PEER;
    if (server != nullptr) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, nullptr);
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }

  std::string& alpn = context->alpn_;
  if (!alpnWire(options.alpn, &alpn)) {
    *error = "ALPN protocol names must be 1-255 bytes";
    return nullptr;
  }
  if (server != nullptr) {
    if (!alpn.empty()) SSL_CTX_set_alpn_select_cb(ctx, selectAlpn, &alpn);
    // Clients resume by ticket (stateless); the id context is required for
    // resumption once client certificates are verified.
    static const unsigned char kIdContext[] = "muon";
    SSL_CTX_set_session_id_context(ctx, kIdContext, sizeof kIdContext - 1);
    if (!options.sessionResumption) {
      SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
      SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
      SSL_CTX_set_num_tickets(ctx, 0);
    }
  } else {
    // SSL_CTX_set_alpn_protos returns 0 on success.
    if (!alpn.empty() && SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(alpn.data()),
                                                 static_cast<unsigned>(alpn.size())) != 0) {
      return failed("ALPN");
    }
    context->serverName_ = client->serverName;
    context->verifyServerName_ = client->verifyServer;
    if (options.sessionResumption) {
      SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
      SSL_CTX_sess_set_new_cb(ctx, newSession);
    } else {
      SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
  }
  return context;
}

int TlsContext::newSession(SSL* ssl, SSL_SESSION* session) {
  auto* context = static_cast<TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  // A copy: OpenSSL marks the connection's own session unusable when the
  // connection ends without close_notify (forceClose), which says nothing
  // about a TLS 1.3 ticket's worth.
  SSL_SESSION* copy = SSL_SESSION_dup(session);
  if (copy == nullptr) return 0;
  std::lock_guard<std::mutex> lock(context->mutex_);
  SSL_SESSION_free(context->lastSession_);
  context->lastSession_ = copy;
  return 0;  // OpenSSL keeps its reference to `session`
}

SSL_SESSION* TlsContext::takeSessionForResumption() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (lastSession_ == nullptr || !SSL_SESSION_is_resumable(lastSession_)) return nullptr;
  SSL_SESSION_up_ref(lastSession_);
  return lastSession_;
}

std::unique_ptr<Transport> TlsContext::newTransport(const Transport::Parts& parts) {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) LOG_FATAL << "SSL_new: out of memory";
  if (server_) {
    SSL_set_accept_state(ssl);
  } else {
    SSL_set_connect_state(ssl);
    const std::string name =
        serverName_.empty() ? InetAddress(sockets::getPeerAddr(parts.fd)).toIp() : serverName_;
    if (isIpAddress(name)) {
      if (verifyServerName_) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
    } else {
      // SNI (SSL_set_tlsext_host_name, spelled out: the macro casts C-style).
      SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(name.c_str()));
      if (verifyServerName_) SSL_set1_host(ssl, name.c_str());
    }
    if (resumption_) {
      if (SSL_SESSION* session = takeSessionForResumption()) {
        SSL_set_session(ssl, session);
        SSL_SESSION_free(session);
      }
    }
  }
  return std::make_unique<TlsTransport>(parts, shared_from_this(), ssl);
}

}  // namespace net
}  // namespace muon
