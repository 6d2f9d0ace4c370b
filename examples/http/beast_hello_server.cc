// beast_hello_server: the Boost.Beast twin of http_hello_server.cc, for the
// HTTP benchmark (examples/bench/http_bench.sh).
//
//   beast_hello_server PORT THREADS
//
// The same command line, address (127.0.0.1:PORT, 0: a free port, printed as
// "listening on 127.0.0.1:PORT") and answers: GET / is 200 with the 13-byte
// body "Hello, World!" served from memory (a span_body over a constant, no
// copy, no file), "Content-Type: text/plain", "Server: beast", and
// "Connection: keep-alive" written as muon writes it; any other target 404.
// Asynchronous, keep-alive and pipelining as Beast's http::async_read gives
// them. THREADS io_contexts, one per thread, each run by that thread alone
// (concurrency hint 1: Asio skips its locking); the acceptor lives on the
// first and spreads new sockets round robin over all of them. That is the
// faster of Asio's two multi-thread layouts (one io_context run by n threads
// shares one queue and its lock) and the one muon's TcpServer mirrors.
// Stops on SIGTERM or SIGINT.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "CommandLine.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using muon::examples::parseInt;
using muon::examples::raiseFdLimit;

namespace {

constexpr char kHello[] = "Hello, World!";
constexpr char kNotFound[] = "Not Found";

// One connection: read a request, write its answer, read the next. Owned by
// the shared_ptr its pending handler holds; dies (closing the socket) when a
// read or write fails or the answer closes.
class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket socket) : socket_(std::move(socket)) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() {
    beast::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    doRead();
  }

 private:
  void doRead() {
    request_ = {};
    http::async_read(
        socket_, buffer_, request_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream) {
      socket_.shutdown(tcp::socket::shutdown_send, ec);
      return;
    }
    if (ec) return;
    const bool found = request_.target() == "/";
    response_ = {};
    response_.version(request_.version());
    response_.result(found ? http::status::ok : http::status::not_found);
    response_.set(http::field::content_type, "text/plain");
    response_.set(http::field::server, "beast");
    response_.keep_alive(request_.keep_alive());
    if (request_.keep_alive()) response_.set(http::field::connection, "keep-alive");
    if (found) {
      response_.body() = Body::value_type(kHello, sizeof kHello - 1);
    } else {
      response_.body() = Body::value_type(kNotFound, sizeof kNotFound - 1);
    }
    response_.prepare_payload();
    http::async_write(socket_, response_,
                      [self = shared_from_this()](beast::error_code writeEc, std::size_t) {
                        self->onWrite(writeEc);
                      });
  }

  void onWrite(beast::error_code ec) {
    if (ec) return;
    if (!response_.keep_alive()) {
      socket_.shutdown(tcp::socket::shutdown_send, ec);
      return;
    }
    doRead();
  }

  using Body = http::span_body<const char>;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<Body> response_;
};

class Server {
 public:
  Server(const tcp::endpoint& listenAddr, int threads)
      : contexts_(makeContexts(threads)),
        acceptor_(*contexts_[0]),
        signals_(*contexts_[0], SIGINT, SIGTERM) {
    for (auto& ctx : contexts_) guards_.emplace_back(asio::make_work_guard(*ctx));
    acceptor_.open(listenAddr.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(listenAddr);
    acceptor_.listen(asio::socket_base::max_listen_connections);
  }

  tcp::endpoint localEndpoint() const { return acceptor_.local_endpoint(); }

  // Runs until SIGINT or SIGTERM: the first io_context on the calling
  // thread, the others on their own threads.
  void run() {
    signals_.async_wait([this](const beast::error_code& ec, int signo) {
      if (ec) return;
      std::fprintf(stderr, "beast_hello_server stopping on signal %d\n", signo);
      for (auto& ctx : contexts_) ctx->stop();
    });
    doAccept();
    std::vector<std::thread> threads;
    for (size_t i = 1; i < contexts_.size(); ++i) {
      threads.emplace_back([ctx = contexts_[i].get()] { ctx->run(); });
    }
    contexts_[0]->run();
    for (auto& t : threads) t.join();
  }

 private:
  static std::vector<std::unique_ptr<asio::io_context>> makeContexts(int n) {
    std::vector<std::unique_ptr<asio::io_context>> contexts;
    for (int i = 0; i < n; ++i) contexts.push_back(std::make_unique<asio::io_context>(1));
    return contexts;
  }

  void doAccept() {
    asio::io_context& ctx = *contexts_[next_];
    next_ = (next_ + 1) % contexts_.size();
    acceptor_.async_accept(ctx, [this](const beast::error_code& ec, tcp::socket socket) {
      if (!ec) {
        std::make_shared<Session>(std::move(socket))->start();
      } else if (ec == asio::error::operation_aborted) {
        return;
      } else if (!acceptErrorReported_) {  // e.g. EMFILE: say it once, keep going
        acceptErrorReported_ = true;
        std::fprintf(stderr, "beast_hello_server: accept: %s\n", ec.message().c_str());
      }
      doAccept();
    });
  }

  std::vector<std::unique_ptr<asio::io_context>> contexts_;  // one per thread
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  size_t next_ = 0;
  bool acceptErrorReported_ = false;
};

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, threads = 0;
  if (help || argc != 3 || !parseInt(argv[1], 0, 65535, &port) ||
      !parseInt(argv[2], 1, 256, &threads)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT THREADS\n"
                 "  answers GET / with \"Hello, World!\" on 127.0.0.1:PORT (0: a free port);\n"
                 "  THREADS 1..256\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  raiseFdLimit();
  try {
    Server server(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)),
        static_cast<int>(threads));
    tcp::endpoint local = server.localEndpoint();
    std::printf("listening on %s:%u\n", local.address().to_string().c_str(),
                static_cast<unsigned>(local.port()));
    std::fflush(stdout);
    server.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "beast_hello_server: %s\n", e.what());
    return 1;
  }
}
