// The HTTP tests' server and client: an HttpServer in its own loop thread,
// and curl as a real client.
#pragma once

#include <stdio.h>
#include <sys/wait.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "NetTestUtil.h"
#include "muon/net/EventLoopThread.h"
#include "muon/net/http/HttpServer.h"

namespace muon {
namespace net {
namespace test {

// An HttpServer in its own loop thread.
class HttpServerThread {
 public:
  explicit HttpServerThread(HttpServer::HttpCallback cb, HttpOptions options = HttpOptions(),
                            int ioThreads = 0)
      : loop_(loopThread_.startLoop()) {
    runSync(loop_, [&] {
      server_ = std::make_unique<HttpServer>(loop_, loopback(0), "http-test");
      server_->setOptions(options);
      if (cb) server_->setHttpCallback(std::move(cb));
      server_->setThreadNum(ioThreads);
      server_->start();
    });
  }
  ~HttpServerThread() {
    runSync(loop_, [this] { server_.reset(); });
  }
  InetAddress address() const { return server_->listenAddress(); }
  uint16_t port() const { return address().port(); }

 private:
  EventLoopThread loopThread_;
  EventLoop* loop_;
  std::unique_ptr<HttpServer> server_;
};

// curl's output for `args` (stdout), or nullopt-like "" with *ok false.
inline std::string runCurl(const std::string& args, bool* ok) {
  std::string command = "curl -sS " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  if (pipe == nullptr) {
    *ok = false;
    return out;
  }
  char chunk[4096];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) out.append(chunk, n);
  int status = ::pclose(pipe);
  *ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

inline bool haveCurl() { return std::system("curl --version >/dev/null 2>&1") == 0; }

}  // namespace test
}  // namespace net
}  // namespace muon
