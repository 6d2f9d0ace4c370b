// finger_server PORT [USER=PLAN]...: the finger service of the book's
// §6.4.3 (its seventh and last step): the client sends a user name and a
// line end, the server answers with that user's plan -- or "No such user" --
// and closes. The plans come from the command line.
//
// A client that sends more than kMaxLine bytes without a line end is cut
// off: the server would otherwise buffer it without bound.
#include <cstdio>
#include <cstring>
#include <map>
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

constexpr size_t kMaxLine = 1024;

using UserMap = std::map<std::string, std::string>;

void onMessage(const UserMap& users, const TcpConnectionPtr& conn, Buffer* buf) {
  const char* crlf = buf->findCRLF();
  if (crlf == nullptr) {
    if (buf->readableBytes() > kMaxLine) {
      LOG_WARN << "finger " << conn->peerAddress().toIpPort() << " sent no line end in " << kMaxLine
               << " bytes";
      buf->retrieveAll();
      conn->forceClose();
    }
    return;
  }
  std::string user(buf->peek(), crlf);
  buf->retrieveAll();  // one query per connection
  auto it = users.find(user);
  conn->send(it == users.end() ? std::string("No such user\r\n") : it->second + "\r\n");
  conn->shutdown();
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0;
  UserMap users;
  bool ok = argc >= 2 && muon::examples::parseInt(argv[1], 0, 65535, &port);
  for (int i = 2; ok && i < argc; ++i) {
    const char* eq = std::strchr(argv[i], '=');
    ok = eq != nullptr && eq != argv[i];
    if (ok) users[std::string(argv[i], static_cast<size_t>(eq - argv[i]))] = eq + 1;
  }
  if (help || !ok) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT [USER=PLAN]...\n"
                 "  answers \"USER\\r\\n\" with USER's plan; PORT 0 picks a free port (printed)\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "finger_server");
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "Finger");
  server.setMessageCallback([&users](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
    onMessage(users, conn, buf);
  });
  server.start();
  LOG_INFO << "finger_server listening on " << server.listenAddress().toIpPort();
  loop.loop();
}
