// TLS on TcpServer / TcpClient (TlsContext, TlsTransport): the plaintext
// path as on plain TCP, close_notify, and every way a handshake fails
// ending in a clear reason with nothing left open. Label `tls`; run on each
// engine (epoll, poll., uring.).
#include "muon/net/internal/TlsTransport.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "NetTestUtil.h"
#include "ServerFixture.h"
#include "TestCertificates.h"
#include "muon/base/Logging.h"
#include "muon/net/EventLoopThread.h"
#include "muon/net/TcpClient.h"
#include "muon/net/TcpServer.h"
#include "muon/net/TlsContext.h"

using namespace muon::net;
using namespace muon::net::test;
using muon::test::TestCertificates;

namespace {

const TestCertificates& certs() {
  static const TestCertificates made;
  return made;
}

TlsServerOptions serverOptions(const std::string& certificate = "server.pem") {
  TlsServerOptions o;
  o.certificateChainFile = certs().file(certificate);
  o.privateKeyFile = certs().file("server.key");
  return o;
}

TlsClientOptions clientOptions(const std::string& ca = "ca.pem") {
  TlsClientOptions o;
  o.caFile = certs().file(ca);
  return o;
}

std::shared_ptr<TlsContext> contextFor(const TlsServerOptions& options) {
  std::string error;
  std::shared_ptr<TlsContext> context = TlsContext::newServer(options, &error);
  EXPECT_TRUE(context) << error;
  return context;
}

std::shared_ptr<TlsContext> contextFor(const TlsClientOptions& options) {
  std::string error;
  std::shared_ptr<TlsContext> context = TlsContext::newClient(options, &error);
  EXPECT_TRUE(context) << error;
  return context;
}

// What one side saw: connections up and down, handshake failures, bytes.
struct Events {
  std::atomic<int> up{0}, down{0}, failures{0};
  std::mutex mutex;
  std::string failure;   // the last handshake failure's reason
  std::string received;  // plaintext, in order
  SecurityInfo security;

  void watchConnection(const TcpConnectionPtr& conn) {
    if (conn->connected()) {
      std::lock_guard<std::mutex> lock(mutex);
      if (conn->security() != nullptr) security = *conn->security();
      up.fetch_add(1);
    } else {
      down.fetch_add(1);
    }
  }
  void watchFailure(const TcpConnectionPtr&, const std::string& reason) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      failure = reason;
    }
    failures.fetch_add(1);
  }
  std::string lastFailure() {
    std::lock_guard<std::mutex> lock(mutex);
    return failure;
  }
  size_t receivedBytes() {
    std::lock_guard<std::mutex> lock(mutex);
    return received.size();
  }
};

// A TLS server in its own loop thread, recording into `events`; `more`
// configures further (in the loop thread).
std::unique_ptr<ServerThread> tlsServer(
    const std::shared_ptr<TlsContext>& context, Events* events,
    const std::function<void(TcpServer&)>& more = [](TcpServer& s) { s.setMessageCallback(echo); }) {
  return std::make_unique<ServerThread>(1, [&](TcpServer& server) {
    server.setTransportLayer(context);
    server.setConnectionCallback([events](const TcpConnectionPtr& c) { events->watchConnection(c); });
    server.setHandshakeFailureCallback(
        [events](const TcpConnectionPtr& c, const std::string& r) { events->watchFailure(c, r); });
    more(server);
  });
}

// A TLS TcpClient in its own loop thread; onUp runs when it is up.
struct TlsClientThread {
  EventLoopThread thread;
  EventLoop* loop = thread.startLoop();
  std::unique_ptr<TcpClient> client;
  Events events;
  std::function<void(const TcpConnectionPtr&)> onUp;

  TlsClientThread(const InetAddress& addr, const std::shared_ptr<TlsContext>& context) {
    runSync(loop, [&] {
      client = std::make_unique<TcpClient>(loop, addr, "tls-client");
      client->setTransportLayer(context);
      client->setConnectionCallback([this](const TcpConnectionPtr& c) {
        events.watchConnection(c);
        if (c->connected() && onUp) onUp(c);
      });
      client->setHandshakeFailureCallback(
          [this](const TcpConnectionPtr& c, const std::string& r) { events.watchFailure(c, r); });
      client->setMessageCallback([this](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) {
        std::lock_guard<std::mutex> lock(events.mutex);
        events.received += buf->retrieveAllAsString();
      });
    });
  }
  ~TlsClientThread() {
    runSync(loop, [&] { client.reset(); });
  }
  void connect() { client->connect(); }
};

// A blocking OpenSSL client on a plain socket: a peer that is not muon.
struct RawTlsClient {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = nullptr;
  int fd = -1;

  RawTlsClient(const InetAddress& addr, int maxVersion = 0) {
    SSL_CTX_load_verify_locations(ctx, certs().file("ca.pem").c_str(), nullptr);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (maxVersion != 0) SSL_CTX_set_max_proto_version(ctx, maxVersion);
    fd = connectTo(addr);
    struct timeval tv = {10, 0};  // no test hangs on a server that says nothing
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
  }
  ~RawTlsClient() {
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    ::close(fd);
  }
  bool handshake() { return SSL_connect(ssl) == 1; }
  // SSL_read once: the bytes, or "" with *sslError set.
  std::string read(int* sslError) {
    char buf[4096];
    const int n = SSL_read(ssl, buf, sizeof buf);
    *sslError = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl, n);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }
};

// Reads until the server closes (true) or 10 s pass (false).
bool readsUntilEof(int fd) {
  char buf[4096];
  for (;;) {
    if (!waitReadable(fd, 10000)) return false;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0 && errno != EINTR && errno != EAGAIN) return errno == ECONNRESET;
  }
}

class TlsTransportTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(certs().ok()) << certs().error(); }
};

TEST_F(TlsTransportTest, EchoesOneMebibyteBothWays) {
  // Before the client: its loop thread may still be sending from it.
  const std::string pattern = makePattern(1024 * 1024);
  Events server;
  auto s = tlsServer(contextFor(serverOptions()), &server);
  TlsClientThread c(s->address(), contextFor(clientOptions()));
  c.onUp = [&](const TcpConnectionPtr& conn) { conn->send(pattern); };
  c.connect();
  ASSERT_TRUE(waitFor([&] { return c.events.receivedBytes() >= pattern.size(); }));
  {
    std::lock_guard<std::mutex> lock(c.events.mutex);
    EXPECT_TRUE(c.events.received == pattern) << "the echo differs";
    EXPECT_EQ(c.events.security.protocol, "TLSv1.3");
    EXPECT_EQ(c.events.security.peerCertificate, "/CN=server");
  }
  EXPECT_EQ(server.up.load(), 1);
  // Our shutdown (close_notify) ends the server's side too.
  c.client->disconnect();
  ASSERT_TRUE(waitFor([&] { return s->numConnections() == 0 && c.events.down.load() == 1; }));
  EXPECT_EQ(server.down.load(), 1);
  EXPECT_EQ(server.failures.load() + c.events.failures.load(), 0);
}

TEST_F(TlsTransportTest, ShutdownSendsCloseNotify) {
  Events server;
  auto s = tlsServer(contextFor(serverOptions()), &server, [](TcpServer& srv) {
    srv.setConnectionCallback([](const TcpConnectionPtr& conn) {
      if (!conn->connected()) return;
      conn->send("bye");
      conn->shutdown();
    });
  });
  RawTlsClient peer(s->address());
  ASSERT_TRUE(peer.handshake());
  std::string got;
  int sslError = SSL_ERROR_NONE;
  while (got.size() < 3 && sslError == SSL_ERROR_NONE) got += peer.read(&sslError);
  EXPECT_EQ(got, "bye");
  peer.read(&sslError);
  EXPECT_EQ(sslError, SSL_ERROR_ZERO_RETURN) << "no close_notify before the end of the stream";
  SSL_shutdown(peer.ssl);
  ::shutdown(peer.fd, SHUT_WR);
  ASSERT_TRUE(waitFor([&] { return s->numConnections() == 0; }));
}

TEST_F(TlsTransportTest, UntrustedServerIsRefusedOnBothSides) {
  Events server;
  auto s = tlsServer(contextFor(serverOptions()), &server);
  TlsClientThread c(s->address(), contextFor(clientOptions("other-ca.pem")));
  c.connect();
  ASSERT_TRUE(waitFor([&] { return c.events.failures.load() == 1 && server.failures.load() == 1; }));
  EXPECT_EQ(c.events.lastFailure(), "certificate verify failed: unable to get local issuer certificate");
  EXPECT_EQ(server.lastFailure(), "tlsv1 alert unknown ca");
  ASSERT_TRUE(waitFor([&] { return s->numConnections() == 0; }));
  EXPECT_EQ(c.events.up.load() + c.events.down.load() + server.up.load() + server.down.load(), 0)
      << "a connection callback ran for a connection that never came up";
  // The failure is reported before the client's loop lets go of the
  // connection: wait for that, it must not keep it.
  EXPECT_TRUE(waitFor([&] { return c.client->connection() == nullptr; }));
}

TEST_F(TlsTransportTest, ExpiredCertificateIsRefused) {
  Events server;
  auto s = tlsServer(contextFor(serverOptions("expired.pem")), &server);
  TlsClientThread c(s->address(), contextFor(clientOptions()));
  c.connect();
  ASSERT_TRUE(waitFor([&] { return c.events.failures.load() == 1; }));
  EXPECT_EQ(c.events.lastFailure(), "certificate verify failed: certificate has expired");
  ASSERT_TRUE(waitFor([&] { return s->numConnections() == 0; }));
}

TEST_F(TlsTransportTest, HostNameMismatchIsRefused) {
  Events server;
  auto s = tlsServer(contextFor(serverOptions("wrongname.pem")), &server);
  TlsClientOptions named = clientOptions();
  named.serverName = "localhost";
  TlsClientThread byName(s->address(), contextFor(named));
  byName.connect();
  // Without a name, the address connected to is checked.
  TlsClientThread byAddress(s->address(), contextFor(clientOptions()));
  byAddress.connect();
  ASSERT_TRUE(waitFor([&] {
    return byName.events.failures.load() == 1 && byAddress.events.failures.load() == 1;
  }));
  EXPECT_EQ(byName.events.lastFailure(), "certificate verify failed: hostname mismatch");
  EXPECT_EQ(byAddress.events.lastFailure(), "certificate verify failed: IP address mismatch");
  ASSERT_TRUE(waitFor([&] { return s->numConnections() == 0; }));
}

// Bytes that are not a TLS handshake: the server gives up at once, with
// OpenSSL's reason, and closes.
void expectRefusedBytes(const std::string& bytes, const std::string& reason) {
  Events server;
  auto s = tlsServer(contextFor(serverOptions()), &server);
  const int fd = connectTo(s->address());
  ASSERT_TRUE(writeAll(fd, bytes.data(), bytes.size()));
  EXPECT_TRUE(readsUntilEof(fd)) << "the server did not close";
  ::close(fd);
  ASSERT_TRUE(waitFor([&] { return server.failures.load() == 1 && s->numConnections() == 0; }));
  EXPECT_EQ(server.lastFailure(), reason);
  EXPECT_EQ(server.up.load() + server.down.load(), 0);
}

TEST_F(TlsTransportTest, PlaintextClientIsRefused) {
  expectRefusedBytes("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", "http request");
}

TEST_F(TlsTransportTest, GarbageInsteadOfClientHelloIsRefused) {
  // A handshake record header, then a body that is no ClientHello.
  std::string garbage("\x16\x03\x01\x00\x40", 5);
  garbage += makePattern(64, 7);
  expectRefusedBytes(garbage, "unexpected message");
}

TEST_F(TlsTransportTest, StalledHandshakeTimesOut) {
  Events server;
  TlsServerOptions options = serverOptions();
  options.handshakeTimeoutSeconds = 0.3;
  auto s = tlsServer(contextFor(options), &server);
  const int fd = connectTo(s->address());
  // Half a record header, then nothing: a slow-loris peer.
  ASSERT_TRUE(writeAll(fd, "\x16\x03", 2));
  const auto start = Clock::now();
  EXPECT_TRUE(readsUntilEof(fd)) << "the server did not close";
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(250));
  ::close(fd);
  ASSERT_TRUE(waitFor([&] { return server.failures.load() == 1 && s->numConnections() == 0; }));
  EXPECT_EQ(server.lastFailure(), "the handshake did not complete within 0.3 s");
}

TEST_F(TlsTransportTest, FloodIsBoundedByTheInputLimit) {
  constexpr size_t kLimit = 64 * 1024;
  constexpr size_t kFlood = 16 * 1024 * 1024;
  // Before the client: its loop thread may still be copying it into the
  // output buffer when the server's limit is reached.
  const std::string flood(kFlood, 'x');
  Events server;
  std::atomic<int> limitHits{0};
  std::mutex mutex;
  TcpConnectionPtr flooded;  // the server's side
  auto s = tlsServer(contextFor(serverOptions()), &server, [&](TcpServer& srv) {
    srv.setConnectionCallback([&](const TcpConnectionPtr& conn) {
      std::lock_guard<std::mutex> lock(mutex);
      flooded = conn->connected() ? conn : nullptr;
    });
    // An application that never consumes.
    srv.setMessageCallback([](const TcpConnectionPtr&, Buffer*, muon::Timestamp) {});
    srv.setInputLimitCallback([&](const TcpConnectionPtr&, size_t) { limitHits.fetch_add(1); }, kLimit);
  });
  TlsClientThread c(s->address(), contextFor(clientOptions()));
  c.onUp = [&](const TcpConnectionPtr& conn) { conn->send(flood); };
  c.connect();
  ASSERT_TRUE(waitFor([&] { return limitHits.load() == 1; }));
  // Let the client push what the kernel will take.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(limitHits.load(), 1);
  TcpConnectionPtr conn;
  {
    std::lock_guard<std::mutex> lock(mutex);
    conn = flooded;
  }
  ASSERT_TRUE(conn);
  const size_t held = runSync(conn->getLoop(), [&] { return conn->inputBuffer()->readableBytes(); });
  // At most one read past the limit: the plaintext of one socket read.
  EXPECT_LT(held, kLimit + 256 * 1024) << "the flood was decrypted past the limit";
  runSync(conn->getLoop(), [&] { conn.reset(); });
}

TEST_F(TlsTransportTest, MutualAuthentication) {
  Events server;
  TlsServerOptions options = serverOptions();
  options.requireClientCertificate = true;
  options.caFile = certs().file("ca.pem");
  auto s = tlsServer(contextFor(options), &server);

  TlsClientThread anonymous(s->address(), contextFor(clientOptions()));
  anonymous.connect();
  ASSERT_TRUE(waitFor([&] { return server.failures.load() == 1; }));
  EXPECT_EQ(server.lastFailure(), "peer did not return a certificate");
  ASSERT_TRUE(waitFor([&] { return s->numConnections() == 0; }));
  // TLS 1.3: the client's side was done (it is up) before the server
  // refused it; the server's alert comes as the handshake failure it is,
  // with OpenSSL's reason, once, and then the connection goes down.
  ASSERT_TRUE(waitFor([&] { return anonymous.events.down.load() == 1; }));
  EXPECT_EQ(anonymous.events.failures.load(), 1);
  EXPECT_EQ(anonymous.events.lastFailure(), "tlsv13 alert certificate required");
  EXPECT_EQ(anonymous.events.up.load(), 1);

  TlsClientOptions withCertificate = clientOptions();
  withCertificate.certificateChainFile = certs().file("client.pem");
  withCertificate.privateKeyFile = certs().file("client.key");
  TlsClientThread known(s->address(), contextFor(withCertificate));
  known.connect();
  ASSERT_TRUE(waitFor([&] { return server.up.load() == 1; }));
  std::lock_guard<std::mutex> lock(server.mutex);
  EXPECT_EQ(server.security.peerCertificate, "/CN=client");
}

TEST_F(TlsTransportTest, SessionIsResumedAndAlpnAgreed) {
  Events server;
  TlsServerOptions options = serverOptions();
  options.alpn = {"muon/1", "http/1.1"};
  auto s = tlsServer(contextFor(options), &server);
  TlsClientOptions clientSide = clientOptions();
  clientSide.alpn = {"http/1.1"};
  auto context = contextFor(clientSide);
  for (int round = 0; round < 2; ++round) {
    TlsClientThread c(s->address(), context);
    // A round trip, so that the server's session tickets have come.
    c.onUp = [](const TcpConnectionPtr& conn) { conn->send("ping"); };
    c.connect();
    ASSERT_TRUE(waitFor([&] { return c.events.receivedBytes() == 4; }));
    std::lock_guard<std::mutex> lock(c.events.mutex);
    EXPECT_EQ(c.events.security.alpn, "http/1.1");
    EXPECT_EQ(c.events.security.resumed, round == 1) << "round " << round;
  }
}

// Log lines, kept while a test needs them (Logger::setOutput).
std::mutex g_logMutex;
std::vector<std::string> g_logLines;
void keepLogLine(const char* line, size_t len) {
  std::lock_guard<std::mutex> lock(g_logMutex);
  g_logLines.emplace_back(line, len);
}

TEST_F(TlsTransportTest, ABadRecordAfterTheHandshakeClosesWithOneLineThatSaysWhy) {
  Events server;
  auto s = tlsServer(contextFor(serverOptions()), &server);
  RawTlsClient peer(s->address());
  ASSERT_TRUE(peer.handshake());
  {
    std::lock_guard<std::mutex> lock(g_logMutex);
    g_logLines.clear();
  }
  muon::Logger::setOutput(&keepLogLine);
  // An application-data record whose bytes no key made.
  std::string record("\x17\x03\x03\x00\x20", 5);
  record += makePattern(32, 3);
  ASSERT_EQ(::write(peer.fd, record.data(), record.size()), static_cast<ssize_t>(record.size()));
  EXPECT_TRUE(readsUntilEof(peer.fd));
  ASSERT_TRUE(waitFor([&] { return server.down.load() == 1; }));
  muon::Logger::setOutput(nullptr);
  std::lock_guard<std::mutex> lock(g_logMutex);
  std::string all;
  size_t mentions = 0;
  for (const std::string& line : g_logLines) {
    all += line;
    if (line.find("TLS record") != std::string::npos || line.find("TlsTransport[") != std::string::npos) {
      ++mentions;
    }
  }
  EXPECT_EQ(mentions, 1u) << all;
  EXPECT_NE(all.find("TLS record ("), std::string::npos) << all;
}

TEST_F(TlsTransportTest, RenegotiationIsRefused) {
  Events server;
  auto s = tlsServer(contextFor(serverOptions()), &server);
  RawTlsClient peer(s->address(), TLS1_2_VERSION);
  ASSERT_TRUE(peer.handshake());
  ASSERT_EQ(SSL_renegotiate(peer.ssl), 1);
  ERR_clear_error();
  EXPECT_NE(SSL_do_handshake(peer.ssl), 1);
  int sslError = SSL_ERROR_NONE;
  if (SSL_renegotiate_pending(peer.ssl) == 1) peer.read(&sslError);
  EXPECT_EQ(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_NO_RENEGOTIATION);
  EXPECT_EQ(server.up.load(), 1);
}

}  // namespace
