// download_server PORT FILE [HIGH_WATER_MARK_KIB]: sends FILE to every client
// that connects, then closes (the book's §7.2, its third and best form).
//
// The file is never read whole into memory: each connection keeps its own
// descriptor and reads a kChunk at a time, adding chunks to the output
// buffer only while that holds less than the high-water mark, and adding
// more when the buffer has been written out (the write-complete callback).
// So a slow reader costs at most the high-water mark plus one chunk of
// memory, whatever the file's size. The high-water-mark callback only logs
// (once per crossing, flushed at once): the filling loop already stops
// there.
//
// At close, each connection logs the bytes sent and the largest its output
// buffer grew ("peak output buffer N bytes"); the tests read that line.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <any>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "StopSignals.h"

using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

constexpr size_t kChunk = 64 * 1024;

// One connection's download; lives in the connection's context.
class Transfer {
 public:
  Transfer(int fd, size_t highWaterMark) : fd_(fd), highWaterMark_(highWaterMark) {}
  ~Transfer() { ::close(fd_); }
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // Tops up conn's output buffer to the high-water mark; at the end of the
  // file (or on a read error) half-closes once the rest is written. Loop
  // thread only.
  void fill(const TcpConnectionPtr& conn) {
    Buffer* out = conn->outputBuffer();
    char chunk[kChunk];
    while (!done_ && out->readableBytes() < highWaterMark_) {
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n < 0) LOG_SYSERR << "download: read";
        done_ = true;
        conn->shutdown();
        break;
      }
      sent_ += static_cast<size_t>(n);
      conn->send(chunk, static_cast<size_t>(n));
      peak_ = std::max(peak_, out->readableBytes());
    }
  }
  size_t sent() const { return sent_; }
  size_t peak() const { return peak_; }

 private:
  const int fd_;
  const size_t highWaterMark_;
  bool done_ = false;
  size_t sent_ = 0;
  size_t peak_ = 0;
};

using TransferPtr = std::shared_ptr<Transfer>;

TransferPtr transferOf(const TcpConnectionPtr& conn) {
  return std::any_cast<const TransferPtr&>(conn->getContext());
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, highWaterKiB = 1024;
  if (help || argc < 3 || argc > 4 || !muon::examples::parseInt(argv[1], 0, 65535, &port) ||
      (argc == 4 && !muon::examples::parseInt(argv[3], 64, 1024 * 1024, &highWaterKiB))) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT FILE [HIGH_WATER_MARK_KIB]\n"
                 "  sends FILE to each client, buffering at most HIGH_WATER_MARK_KIB (64..1048576,\n"
                 "  default 1024) plus 64 KiB per client; PORT 0 picks a free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  const std::string file = argv[2];
  const size_t highWaterMark = static_cast<size_t>(highWaterKiB) * 1024;
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "download_server");
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "DownloadServer");
  server.setConnectionCallback([&file, highWaterMark](const TcpConnectionPtr& conn) {
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN");
    if (!conn->connected()) {
      if (conn->getContext().has_value()) {
        const TransferPtr t = transferOf(conn);
        LOG_INFO << conn->peerAddress().toIpPort() << " sent " << t->sent()
                 << " bytes, peak output buffer " << t->peak() << " bytes";
      }
      return;
    }
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      LOG_SYSERR << "download: open " << file;
      conn->forceClose();
      return;
    }
    conn->setHighWaterMarkCallback(
        [](const TcpConnectionPtr& c, size_t size) {
          LOG_INFO << c->peerAddress().toIpPort() << " output buffer at " << size
                   << " bytes: slow reader, waiting for write-complete";
        },
        highWaterMark);
    auto transfer = std::make_shared<Transfer>(fd, highWaterMark);
    conn->setContext(transfer);
    transfer->fill(conn);
  });
  server.setWriteCompleteCallback([](const TcpConnectionPtr& conn) { transferOf(conn)->fill(conn); });
  server.setMessageCallback([](const TcpConnectionPtr&, Buffer* buf, muon::Timestamp) { buf->retrieveAll(); });
  server.start();
  LOG_INFO << "download_server listening on " << server.listenAddress().toIpPort() << ", file "
           << file << ", high-water mark " << highWaterMark << " bytes";
  loop.loop();
}
