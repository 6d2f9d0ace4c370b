// Pingpong server written with Boost.Asio: the twin of pingpong_server.cc.
//
//   asio_pingpong_server [--tls CERT KEY] ADDRESS PORT THREADS
//
// With --tls, every connection is an asio::ssl::stream, TLS 1.3 with
// AES-128-GCM only, as pingpong_server --tls (PingpongTls.h).
// Echoes back every byte it reads. THREADS io_contexts, one per thread (the
// io_context-per-thread pattern of Asio's HTTP server 2 example); the acceptor
// lives on the first and new sockets are spread round-robin over all of them,
// as muon's TcpServer spreads connections over its loop threads. PORT 0 binds
// an ephemeral port; the first line printed is "listening on ADDRESS:PORT".
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "CommandLine.h"

namespace asio = boost::asio;
using asio::ip::tcp;
using muon::examples::parseInt;
using muon::examples::raiseFdLimit;

namespace {

// Read size per async_read_some. muon's Buffer reads with readv into its
// writable space plus a 64 KiB stack buffer, so a 64 KiB read here lets both
// servers drain a socket in one system call.
constexpr size_t kReadSize = 64 * 1024;

// One connection: read some, write it all back, read again. Stream is a
// tcp::socket, or an asio::ssl::stream over one (whose handshake comes
// first). Owned by the shared_ptr its pending handler holds; it dies (and
// closes its socket) when a read or write fails, e.g. on the client's EOF.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  explicit Session(Stream socket) : socket_(std::move(socket)), data_(new char[kReadSize]) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() {
    boost::system::error_code ec;
    socket_.lowest_layer().set_option(tcp::no_delay(true), ec);
    if constexpr (std::is_same<Stream, tcp::socket>::value) {
      doRead();
    } else {
      auto self = this->shared_from_this();
      socket_.async_handshake(asio::ssl::stream_base::server,
                              [this, self](const boost::system::error_code& e) {
                                if (!e) doRead();
                              });
    }
  }

 private:
  void doRead() {
    auto self = this->shared_from_this();
    socket_.async_read_some(asio::buffer(data_.get(), kReadSize),
                            [this, self](const boost::system::error_code& ec, size_t n) {
                              if (!ec) doWrite(n);
                            });
  }

  void doWrite(size_t n) {
    auto self = this->shared_from_this();
    asio::async_write(socket_, asio::buffer(data_.get(), n),
                      [this, self](const boost::system::error_code& ec, size_t) {
                        if (!ec) doRead();
                      });
  }

  Stream socket_;
  std::unique_ptr<char[]> data_;  // not zero-filled: untouched pages stay unmapped
};

using TlsStream = asio::ssl::stream<tcp::socket>;

class Server {
 public:
  // tls: the TLS context, or nullptr for plain TCP.
  Server(const tcp::endpoint& listenAddr, int threads, asio::ssl::context* tls)
      : contexts_(makeContexts(threads)), acceptor_(*contexts_[0]), tls_(tls) {
    for (auto& ctx : contexts_) guards_.emplace_back(asio::make_work_guard(*ctx));
    acceptor_.open(listenAddr.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(listenAddr);
    acceptor_.listen(asio::socket_base::max_listen_connections);
  }

  tcp::endpoint localEndpoint() const { return acceptor_.local_endpoint(); }

  // Runs until killed: the first io_context on the calling thread, the others
  // on their own threads.
  void run() {
    doAccept();
    std::vector<std::thread> threads;
    for (size_t i = 1; i < contexts_.size(); ++i) {
      threads.emplace_back([ctx = contexts_[i].get()] { ctx->run(); });
    }
    contexts_[0]->run();
    for (auto& t : threads) t.join();
  }

 private:
  // Concurrency hint 1: each io_context is run by one thread only, which
  // lets Asio skip some locking.
  static std::vector<std::unique_ptr<asio::io_context>> makeContexts(int n) {
    std::vector<std::unique_ptr<asio::io_context>> contexts;
    for (int i = 0; i < n; ++i) contexts.push_back(std::make_unique<asio::io_context>(1));
    return contexts;
  }

  void doAccept() {
    asio::io_context& ctx = *contexts_[next_];
    next_ = (next_ + 1) % contexts_.size();
    acceptor_.async_accept(ctx, [this](const boost::system::error_code& ec, tcp::socket socket) {
      if (!ec && tls_ != nullptr) {
        std::make_shared<Session<TlsStream>>(TlsStream(std::move(socket), *tls_))->start();
      } else if (!ec) {
        std::make_shared<Session<tcp::socket>>(std::move(socket))->start();
      } else if (!acceptErrorReported_) {  // e.g. EMFILE: say it once, keep going
        acceptErrorReported_ = true;
        std::fprintf(stderr, "asio_pingpong_server: accept: %s\n", ec.message().c_str());
      }
      doAccept();
    });
  }

  std::vector<std::unique_ptr<asio::io_context>> contexts_;  // one per thread
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  tcp::acceptor acceptor_;
  asio::ssl::context* const tls_;
  size_t next_ = 0;
  bool acceptErrorReported_ = false;
};

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  const char* program = argv[0];
  std::optional<asio::ssl::context> tls;
  if (argc >= 4 && std::string(argv[1]) == "--tls") {
    try {
      tls.emplace(asio::ssl::context::tls_server);
      // The pair's cipher, as PingpongTls.h sets it for muon.
      SSL_CTX_set_min_proto_version(tls->native_handle(), TLS1_3_VERSION);
      SSL_CTX_set_ciphersuites(tls->native_handle(), "TLS_AES_128_GCM_SHA256");
      tls->use_certificate_chain_file(argv[2]);
      tls->use_private_key_file(argv[3], asio::ssl::context::pem);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", program, e.what());
      return 1;
    }
    argc -= 3;
    argv += 3;
  }
  long port = 0, threads = 0;
  boost::system::error_code ec;
  asio::ip::address address;
  if (argc == 4) address = asio::ip::make_address(argv[1], ec);
  if (help || argc != 4 || ec || !parseInt(argv[2], 0, 65535, &port) ||
      !parseInt(argv[3], 1, 256, &threads)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s [--tls CERT KEY] ADDRESS PORT THREADS\n"
                 "  echoes every byte back; PORT 0 picks a free port; THREADS 1..256\n",
                 program);
    return help ? 0 : 2;
  }
  raiseFdLimit();
  try {
    Server server(tcp::endpoint(address, static_cast<unsigned short>(port)),
                  static_cast<int>(threads), tls ? &*tls : nullptr);
    tcp::endpoint local = server.localEndpoint();
    std::printf("listening on %s:%u\n", local.address().to_string().c_str(),
                static_cast<unsigned>(local.port()));
    std::fflush(stdout);
    server.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "asio_pingpong_server: %s\n", e.what());
    return 1;
  }
}
