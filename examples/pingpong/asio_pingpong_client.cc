// Pingpong client written with Boost.Asio: the twin of pingpong_client.cc.
//
//   asio_pingpong_client [--tls CA] ADDRESS PORT THREADS BLOCKSIZE SESSIONS SECONDS
//
// SESSIONS connections spread round-robin over THREADS io_contexts (one per
// thread). Each sends BLOCKSIZE bytes once connected and then echoes back
// whatever it reads. After SECONDS every session shuts down its write side
// (once its pending write is done), keeps reading until the server closes,
// and the client prints the totals: bytes and messages (read completions)
// read, their average size, and bytes read per second of the run.
//
// With --tls, each session is an asio::ssl::stream (TLS 1.3, AES-128-GCM
// only, as pingpong_client --tls) whose server certificate must chain to
// the PEM file CA and name ADDRESS; at the end, once every byte sent has
// come back, it sends close_notify (async_shutdown) instead of the TCP
// half-close.
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CommandLine.h"

namespace asio = boost::asio;
using asio::ip::tcp;
using muon::examples::parseInt;
using muon::examples::parseNumber;
using muon::examples::raiseFdLimit;

namespace {

constexpr size_t kReadSize = 64 * 1024;  // as in asio_pingpong_server.cc

class Client;

// One connection. Half duplex, like the server: at most one read or one
// write is pending, so all members are touched only by its io_context's thread.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // tls: the TLS context, or nullptr for plain TCP.
  Session(asio::io_context& ctx, Client* owner, asio::ssl::context* tls)
      : socket_(ctx), owner_(owner), data_(new char[kReadSize]) {
    if (tls != nullptr) tls_.emplace(socket_, *tls);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Both safe to call from any thread: the work is posted to the session's
  // io_context. `message` must outlive the session.
  void start(const tcp::endpoint& server, const std::string& message);
  void stop();

  int64_t bytesRead() const { return bytesRead_; }
  int64_t messagesRead() const { return messagesRead_; }

 private:
  void connect(const tcp::endpoint& server, const std::string& message);
  void doRead();
  void doWrite(const char* data, size_t n);
  void finish(const boost::system::error_code& ec);
  // The end of our side: close_notify on TLS (then the server closes), the
  // TCP half-close otherwise.
  void endWriting();
  template <typename Handler>
  void readSome(Handler handler);
  template <typename Handler>
  void writeAll(const char* data, size_t n, Handler handler);

  tcp::socket socket_;
  // Over socket_ with --tls (a reference to it, so socket_ stays the one
  // that is connected and closed).
  std::optional<asio::ssl::stream<tcp::socket&>> tls_;
  Client* owner_;
  std::unique_ptr<char[]> data_;
  bool writing_ = false;
  int64_t unechoed_ = 0;  // bytes written whose echo has not been read
  bool stopping_ = false;
  bool finished_ = false;
  int64_t bytesRead_ = 0;
  int64_t messagesRead_ = 0;
};

class Client {
 public:
  Client(const tcp::endpoint& server, int threads, size_t blockSize, int sessions,
         asio::ssl::context* tls)
      : server_(server), live_(sessions) {
    // Concurrency hint 1: each io_context is run by one thread only.
    for (int i = 0; i < threads; ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      guards_.emplace_back(asio::make_work_guard(*contexts_.back()));
    }
    message_.resize(blockSize);
    for (size_t i = 0; i < blockSize; ++i) message_[i] = static_cast<char>(i % 128);
    for (int i = 0; i < sessions; ++i) {
      asio::io_context& ctx = *contexts_[static_cast<size_t>(i) % contexts_.size()];
      sessions_.push_back(std::make_shared<Session>(ctx, this, tls));
    }
  }

  // Runs the whole benchmark; returns the process exit status.
  int run(double seconds) {
    std::vector<std::thread> threads;
    for (auto& ctx : contexts_) threads.emplace_back([c = ctx.get()] { c->run(); });

    auto start = std::chrono::steady_clock::now();
    for (auto& s : sessions_) s->start(server_, message_);
    std::this_thread::sleep_until(start + std::chrono::duration<double>(seconds));
    auto stop = std::chrono::steady_clock::now();
    for (auto& s : sessions_) s->stop();

    bool drained;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      drained = done_.wait_for(lock, std::chrono::seconds(10), [this] { return live_ == 0; });
    }
    if (!drained) {
      std::fprintf(stderr, "asio_pingpong_client: %d sessions still open 10 s after stop\n",
                   liveCount());
      for (auto& ctx : contexts_) ctx->stop();
    }
    guards_.clear();
    for (auto& t : threads) t.join();

    int64_t bytes = 0, messages = 0;
    for (auto& s : sessions_) {
      bytes += s->bytesRead();
      messages += s->messagesRead();
    }
    double elapsed = std::chrono::duration<double>(stop - start).count();
    std::printf("%lld total bytes read\n", static_cast<long long>(bytes));
    std::printf("%lld total messages read\n", static_cast<long long>(messages));
    std::printf("%.2f average message size\n",
                messages > 0 ? static_cast<double>(bytes) / static_cast<double>(messages) : 0.0);
    std::printf("%.2f MiB/s throughput\n", static_cast<double>(bytes) / elapsed / (1024 * 1024));
    if (failed_ > 0) {
      std::fprintf(stderr, "asio_pingpong_client: %d of %zu sessions failed\n", failed_.load(),
                   sessions_.size());
    }
    return drained && failed_ == 0 && bytes > 0 ? 0 : 1;
  }

  // Called once per session, from its context's thread, when it is closed.
  void sessionDone(bool failed) {
    if (failed) ++failed_;
    std::lock_guard<std::mutex> lock(mutex_);
    if (--live_ == 0) done_.notify_all();
  }

 private:
  int liveCount() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }

  tcp::endpoint server_;
  std::string message_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;  // one per thread
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  std::vector<std::shared_ptr<Session>> sessions_;
  std::mutex mutex_;
  std::condition_variable done_;
  int live_;  // sessions not yet closed; guarded by mutex_
  std::atomic<int> failed_{0};
};

void Session::start(const tcp::endpoint& server, const std::string& message) {
  auto self = shared_from_this();
  asio::post(socket_.get_executor(), [this, self, server, &message] { connect(server, message); });
}

void Session::connect(const tcp::endpoint& server, const std::string& message) {
  auto self = shared_from_this();
  socket_.async_connect(server, [this, self, &message](const boost::system::error_code& ec) {
    if (ec) {
      finish(ec);
      return;
    }
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    auto begin = [this, self, &message] {
      if (stopping_) {  // stop() came before the connection
        endWriting();
      } else {
        doWrite(message.data(), message.size());
      }
    };
    if (!tls_) {
      begin();
      return;
    }
    tls_->async_handshake(asio::ssl::stream_base::client,
                          [this, self, begin](const boost::system::error_code& e) {
                            if (e) {
                              finish(e);
                            } else {
                              begin();
                            }
                          });
  });
}

void Session::endWriting() {
  if (!tls_) {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    doRead();
    return;
  }
  // close_notify out, then the server's end: its close arrives as an error
  // of the shutdown (no close_notify comes back), the normal end here.
  auto self = shared_from_this();
  tls_->async_shutdown([this, self](const boost::system::error_code& e) {
    finish(e ? e : asio::error::eof);
  });
}

template <typename Handler>
void Session::readSome(Handler handler) {
  if (tls_) {
    tls_->async_read_some(asio::buffer(data_.get(), kReadSize), std::move(handler));
  } else {
    socket_.async_read_some(asio::buffer(data_.get(), kReadSize), std::move(handler));
  }
}

template <typename Handler>
void Session::writeAll(const char* data, size_t n, Handler handler) {
  if (tls_) {
    asio::async_write(*tls_, asio::buffer(data, n), std::move(handler));
  } else {
    asio::async_write(socket_, asio::buffer(data, n), std::move(handler));
  }
}

void Session::stop() {
  auto self = shared_from_this();
  asio::post(socket_.get_executor(), [this, self] {
    if (stopping_ || finished_) return;
    stopping_ = true;
    // While a write is pending, its handler shuts down (muon's
    // TcpConnection::shutdown also waits for the output buffer to drain).
    // On TLS, a pending read's handler does (one operation at a time).
    if (!writing_ && socket_.is_open() && !tls_) {
      boost::system::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
    }
  });
}

void Session::doRead() {
  auto self = shared_from_this();
  readSome([this, self](const boost::system::error_code& ec, size_t n) {
                            if (ec) {
                              finish(ec);
                              return;
                            }
                            bytesRead_ += static_cast<int64_t>(n);
                            ++messagesRead_;
                            unechoed_ -= static_cast<int64_t>(n);
                            if (stopping_ && tls_) {
                              // close_notify once every byte sent has come
                              // back: TLS allows no data after it.
                              if (unechoed_ > 0) {
                                doRead();
                              } else {
                                endWriting();
                              }
                            } else if (stopping_) {
                              doRead();  // write side is closed: just drain
                            } else {
                              doWrite(data_.get(), n);
                            }
                          });
}

void Session::doWrite(const char* data, size_t n) {
  auto self = shared_from_this();
  writing_ = true;
  unechoed_ += static_cast<int64_t>(n);
  writeAll(data, n, [this, self](const boost::system::error_code& ec, size_t) {
                      writing_ = false;
                      if (ec) {
                        finish(ec);
                        return;
                      }
                      if (stopping_ && tls_) {
                        doRead();  // its echo, then close_notify
                        return;
                      }
                      if (stopping_) {
                        boost::system::error_code ignored;
                        socket_.shutdown(tcp::socket::shutdown_send, ignored);
                      }
                      doRead();
                    });
}

void Session::finish(const boost::system::error_code& ec) {
  if (finished_) return;
  finished_ = true;
  // EOF after our shutdown is the normal end (on TLS also the stream cut
  // without the server's close_notify); anything else is a failure.
  bool failed = !(stopping_ && (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated));
  if (failed) {
    std::fprintf(stderr, "asio_pingpong_client: session: %s\n", ec.message().c_str());
  }
  boost::system::error_code ignored;
  socket_.close(ignored);
  owner_->sessionDone(failed);
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  const char* program = argv[0];
  std::optional<asio::ssl::context> tls;
  if (argc >= 3 && std::string(argv[1]) == "--tls") {
    try {
      tls.emplace(asio::ssl::context::tls_client);
      // The pair's cipher, as PingpongTls.h sets it for muon.
      SSL_CTX_set_min_proto_version(tls->native_handle(), TLS1_3_VERSION);
      SSL_CTX_set_ciphersuites(tls->native_handle(), "TLS_AES_128_GCM_SHA256");
      tls->load_verify_file(argv[2]);
      tls->set_verify_mode(asio::ssl::verify_peer);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", program, e.what());
      return 1;
    }
    argc -= 2;
    argv += 2;
  }
  long port = 0, threads = 0, blockSize = 0, sessions = 0;
  double seconds = 0;
  boost::system::error_code ec;
  asio::ip::address address;
  if (argc == 7) address = asio::ip::make_address(argv[1], ec);
  if (help || argc != 7 || ec || !parseInt(argv[2], 1, 65535, &port) ||
      !parseInt(argv[3], 1, 256, &threads) || !parseInt(argv[4], 1, 64 << 20, &blockSize) ||
      !parseInt(argv[5], 1, 1000000, &sessions) || !parseNumber(argv[6], 0.01, 86400, &seconds)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s [--tls CA] ADDRESS PORT THREADS BLOCKSIZE SESSIONS SECONDS\n"
                 "  THREADS 1..256, BLOCKSIZE bytes, SESSIONS connections, SECONDS may be "
                 "fractional\n",
                 program);
    return help ? 0 : 2;
  }
  raiseFdLimit();
  // The server's certificate must name the address connected to.
  if (tls) X509_VERIFY_PARAM_set1_ip_asc(SSL_CTX_get0_param(tls->native_handle()), argv[1]);
  try {
    Client client(tcp::endpoint(address, static_cast<unsigned short>(port)),
                  static_cast<int>(threads), static_cast<size_t>(blockSize),
                  static_cast<int>(sessions), tls ? &*tls : nullptr);
    return client.run(seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "asio_pingpong_client: %s\n", e.what());
    return 1;
  }
}
