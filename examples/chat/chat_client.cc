// chat_client HOST PORT: the chat room's client (the book's §7.3). Each
// line read from stdin goes to the server as one message; each message from
// the server is printed as "<<< MESSAGE". At the end of stdin the client
// half-closes, prints what the server still sends, and exits when the
// server closes; SIGINT/SIGTERM stop it at once.
//
// One loop does it all: stdin is one more fd the loop watches (the book's
// client reads stdin in the main thread and runs the loop in another). A
// file (or /dev/null) cannot be watched with epoll, so stdin redirected from
// one is read whole once connected.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpClient.h"

#include "CommandLine.h"
#include "LengthHeaderCodec.h"
#include "StopSignals.h"

using muon::net::Buffer;
using muon::net::Channel;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpClient;
using muon::net::TcpConnectionPtr;

namespace {

// Lines from stdin to the connection; the loop's thread only.
class StdinReader {
 public:
  StdinReader(EventLoop* loop, TcpClient* client) : loop_(loop), client_(client) {}
  ~StdinReader() {
    if (channel_) stopWatching();
  }
  StdinReader(const StdinReader&) = delete;
  StdinReader& operator=(const StdinReader&) = delete;

  // Called once connected.
  void start() {
    if (!pollable()) {
      while (readSome()) {
      }
      return;
    }
    channel_ = std::make_shared<Channel>(loop_, STDIN_FILENO);
    channel_->setReadCallback([this](muon::Timestamp) { onReadable(); });
    channel_->setCloseCallback([this] { onReadable(); });  // a closed pipe: read sees the end
    channel_->enableReading();
  }

 private:
  // epoll takes pipes, sockets and terminals; files and /dev/null are
  // refused (EPERM), and never block a read anyway.
  static bool pollable() {
    struct stat st;
    if (::fstat(STDIN_FILENO, &st) != 0) return false;
    return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || ::isatty(STDIN_FILENO) == 1;
  }
  void onReadable() {
    if (!readSome()) stopWatching();
  }
  // Reads once and sends the whole lines; at the end of input sends the
  // rest and half-closes. False at the end (or on an error).
  bool readSome() {
    int savedErrno = 0;
    const ssize_t n = input_.readFd(STDIN_FILENO, &savedErrno);
    while (const char* eol = input_.findEOL()) {
      sendLine(std::string(input_.peek(), eol));
      input_.retrieveUntil(eol + 1);
    }
    if (n > 0) return true;
    if (n < 0) LOG_ERROR << "chat_client: reading stdin: " << muon::strerror_tl(savedErrno);
    if (input_.readableBytes() > 0) sendLine(input_.retrieveAllAsString());
    if (TcpConnectionPtr conn = client_->connection()) conn->shutdown();
    return false;
  }
  void sendLine(const std::string& line) {
    TcpConnectionPtr conn = client_->connection();
    if (!conn) return;
    if (line.size() > static_cast<size_t>(chat::LengthHeaderCodec::kMaxMessageLength)) {
      LOG_WARN << "chat_client: a line of " << line.size() << " bytes is too long, not sent";
      return;
    }
    chat::LengthHeaderCodec::send(conn, line);
  }
  // Also called from the channel's own callback, so the channel itself is
  // freed after the event is handled.
  void stopWatching() {
    channel_->disableAll();
    channel_->remove();
    loop_->queueInLoop([channel = std::move(channel_)] {});
  }

  EventLoop* const loop_;
  TcpClient* const client_;
  std::shared_ptr<Channel> channel_;  // null when stdin is a file, or at its end
  Buffer input_;
};

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0;
  InetAddress serverAddr;
  if (help || argc != 3 || !muon::examples::parseInt(argv[2], 1, 65535, &port) ||
      !InetAddress::parse(muon::examples::joinHostPort(argv[1], argv[2]), &serverAddr)) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s HOST PORT\n"
                 "  sends each line of stdin to the chat server at HOST (numeric) and PORT,\n"
                 "  prints each message it relays\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "chat_client");
  TcpClient client(&loop, serverAddr, "ChatClient");
  StdinReader stdinReader(&loop, &client);
  chat::LengthHeaderCodec codec([](const TcpConnectionPtr&, const std::string& message, muon::Timestamp) {
    std::fputs("<<< ", stdout);
    std::fwrite(message.data(), 1, message.size(), stdout);  // NULs and all
    std::fputc('\n', stdout);
    std::fflush(stdout);
  });
  client.setConnectionCallback([&](const TcpConnectionPtr& conn) {
    if (conn->connected()) {
      LOG_INFO << "chat_client connected to " << conn->peerAddress().toIpPort();
      stdinReader.start();
    } else {
      LOG_INFO << "chat_client: the server closed the connection";
      loop.quit();
    }
  });
  client.setMessageCallback([&codec](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp time) {
    codec.onMessage(conn, buf, time);
  });
  client.connect();
  loop.loop();
}
