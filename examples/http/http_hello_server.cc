// http_hello_server: muon's HttpServer answering "Hello, World!", the server
// of the HTTP benchmark (examples/bench/http_bench.sh).
//
//   http_hello_server PORT THREADS
//
// Listens on 127.0.0.1:PORT (0: a free port) and prints
// "listening on 127.0.0.1:PORT" once it does. GET / is answered 200 with the
// 13-byte body "Hello, World!", "Content-Type: text/plain" and
// "Server: muon", kept alive as the client asks; any other path gets 404 (the
// connection kept alive too). THREADS 1 serves everything in the main loop;
// THREADS n > 1 gives the server n I/O loops (the main loop then only
// accepts), as pingpong_server. Stops on SIGTERM or SIGINT.
// beast_hello_server.cc is its Boost.Beast twin.
#include <cstdio>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/http/HttpRequest.h"
#include "muon/net/http/HttpResponse.h"
#include "muon/net/http/HttpServer.h"

#include "CommandLine.h"
#include "StopSignals.h"

using muon::Logger;
using muon::examples::parseInt;
using muon::examples::raiseFdLimit;
using muon::examples::StopSignals;
using muon::net::EventLoop;
using muon::net::HttpRequest;
using muon::net::HttpResponse;
using muon::net::HttpServer;
using muon::net::InetAddress;

namespace {

// Runs in the I/O threads at once; reads only constants.
void onRequest(const HttpRequest& req, HttpResponse* resp) {
  resp->setContentType("text/plain");
  resp->addHeader("Server", "muon");
  if (req.path() == "/") {
    resp->setStatusCode(HttpResponse::k200Ok);
    resp->setStatusMessage("OK");
    resp->setBody("Hello, World!");
  } else {
    resp->setStatusCode(HttpResponse::k404NotFound);
    resp->setStatusMessage("Not Found");
    resp->setBody("Not Found");
  }
}

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
  // No line per connection: a benchmark's thousand connections would be a
  // thousand lines inside the measurement.
  Logger::setLogLevel(Logger::WARN);

  EventLoop loop;
  StopSignals stop(&loop, "http_hello_server");
  HttpServer server(&loop, InetAddress(static_cast<uint16_t>(port), true), "http_hello");
  server.setHttpCallback(onRequest);
  if (threads > 1) server.setThreadNum(static_cast<int>(threads));
  server.start();
  std::printf("listening on %s\n", server.listenAddress().toIpPort().c_str());
  std::fflush(stdout);
  loop.loop();
}
