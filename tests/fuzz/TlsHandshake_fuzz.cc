// libFuzzer target for TLS's server side: random bytes as a client's first
// flight to a TlsTransport (muon::tls) on a real EventLoop, followed by the
// end of the stream. Properties:
//  - whatever the bytes, the handshake ends (it cannot complete without a
//    client that holds keys): the connection is refused and closed, within
//    the loop's own iterations, without the connection callback;
//  - nothing leaks or reads out of bounds (ASan), nothing is left open.
// The certificate and key below exist for this target only (self-signed,
// EC P-256); they are written to a temporary directory at start.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "FuzzCheck.h"
#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TlsContext.h"

namespace {

const char kCertificate[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBdDCCARugAwIBAgIUNuw3XsBPEdPWmQGE/aGbCnu8GrAwCgYIKoZIzj0EAwIw\n"
    "DzENMAsGA1UEAwwEZnV6ejAgFw0yNjExMjcwNDA2NTBaGA8yMTI2MTEwMzA0MDY1\n"
    "MFowDzENMAsGA1UEAwwEZnV6ejBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABEjO\n"
    "X4MGXiejhXY0MZKxOhiC2P6/lam105pfEEvilFUs6hy4YNseeeHaiyCmv350OnF2\n"
    "OtlBhRRwGYewnsmwAS6jUzBRMB0GA1UdDgQWBBTDn0DL+ttWAsXuB8Mj6dWIQ0rv\n"
    "iTAfBgNVHSMEGDAWgBTDn0DL+ttWAsXuB8Mj6dWIQ0rviTAPBgNVHRMBAf8EBTAD\n"
    "AQH/MAoGCCqGSM49BAMCA0cAMEQCID/mR9kShdnr/7zQD7YvnoiW8W0QL8NkFEmT\n"
    "xSBkYm99AiA//Ync7LM+OR2kxj9CgGIcKh/Wqj/mrWGy7ILDxo5Dvw==\n"
    "-----END CERTIFICATE-----\n";

const char kKey[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvVp4i4PH5c4bpO9e\n"
    "WYVG9fYL7hFRUA03LKORKeUR2FShRANCAARIzl+DBl4no4V2NDGSsToYgtj+v5Wp\n"
    "tdOaXxBL4pRVLOocuGDbHnnh2osgpr9+dDpxdjrZQYUUcBmHsJ7JsAEu\n"
    "-----END PRIVATE KEY-----\n";

struct Server {
  muon::net::EventLoop loop;
  std::shared_ptr<muon::net::TlsContext> tls;

  Server() {
    muon::Logger::setLogLevel(muon::Logger::FATAL);  // a refusal per input
    char dir[] = "/tmp/muon_tls_fuzz.XXXXXX";
    FUZZ_CHECK(::mkdtemp(dir) != nullptr);
    const std::string cert = std::string(dir) + "/cert.pem", key = std::string(dir) + "/key.pem";
    std::ofstream(cert) << kCertificate;
    std::ofstream(key) << kKey;
    muon::net::TlsServerOptions options;
    options.certificateChainFile = cert;
    options.privateKeyFile = key;
    std::string error;
    tls = muon::net::TlsContext::newServer(options, &error);
    ::unlink(cert.c_str());
    ::unlink(key.c_str());
    ::rmdir(dir);
    FUZZ_CHECK(tls != nullptr);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server* server = new Server;  // one loop for the process, in this thread
  using muon::net::TcpConnection;
  using muon::net::TcpConnectionPtr;
  int fds[2];
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
  // The client's bytes and its end of stream, all there before the server
  // reads (-max_len keeps them within the socket's buffer).
  const ssize_t written = ::write(fds[1], data, size);
  FUZZ_CHECK(written == static_cast<ssize_t>(size) || size == 0);
  ::shutdown(fds[1], SHUT_WR);

  bool up = false, closed = false;
  auto conn = std::make_shared<TcpConnection>(&server->loop, "fuzz", fds[0], muon::net::InetAddress(),
                                              muon::net::InetAddress(), server->tls.get());
  conn->setConnectionCallback([&](const TcpConnectionPtr& c) { up = up || c->connected(); });
  conn->setCloseCallback([&](const TcpConnectionPtr&) {
    closed = true;
    server->loop.quit();
  });
  conn->connectEstablished();
  // A guard far beyond any real handshake: its firing is the failure.
  const muon::net::TimerId guard = server->loop.runAfter(5.0, [&] { server->loop.quit(); });
  if (!closed) server->loop.loop();
  server->loop.cancel(guard);
  FUZZ_CHECK(closed);
  FUZZ_CHECK(!up);
  conn->connectDestroyed();
  conn.reset();
  ::close(fds[1]);
  return 0;
}
