// muduo's HttpServer example (muduo/net/http/tests/HttpServer_test.cc) built
// through muon::muduo_compat: the same headers, the same onRequest (it prints
// each request's method, path and fields, answers "/" with an HTML page,
// "/favicon.ico" with a PNG and the rest with 404 and a close), the same
// server calls in main. The favicon here is our own few bytes.
//
// To check itself instead of serving port 8000 for ever, main listens on
// port 0 (read back with listenAddress(), muon's addition) and a client
// thread sends the three requests pipelined on one connection, reads to the
// close and quits the loop. Exit status 0 if the three answers came back.
// With MUDUO_EXAMPLE_MAIN defined, main is muduo's own.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <string>
#include <thread>

#include "muduo/base/Logging.h"
#include "muduo/net/EventLoop.h"
#include "muduo/net/http/HttpRequest.h"
#include "muduo/net/http/HttpResponse.h"
#include "muduo/net/http/HttpServer.h"

using namespace muduo;
using namespace muduo::net;

extern char favicon[16];

void onRequest(const HttpRequest& req, HttpResponse* resp) {
  std::cout << "Headers " << req.methodString() << " " << req.path() << std::endl;
  const std::map<string, string>& headers = req.headers();
  for (std::map<string, string>::const_iterator it = headers.begin(); it != headers.end(); ++it) {
    std::cout << it->first << ": " << it->second << std::endl;
  }

  if (req.path() == "/") {
    resp->setStatusCode(HttpResponse::k200Ok);
    resp->setStatusMessage("OK");
    resp->setContentType("text/html");
    resp->addHeader("Server", "Muduo");
    string now = Timestamp::now().toFormattedString();
    resp->setBody("<html><head><title>muon</title></head><body><h1>Hello</h1>Now is " + now +
                  "</body></html>");
  } else if (req.path() == "/favicon.ico") {
    resp->setStatusCode(HttpResponse::k200Ok);
    resp->setStatusMessage("OK");
    resp->setContentType("image/png");
    resp->setBody(string(favicon, sizeof favicon));
  } else {
    resp->setStatusCode(HttpResponse::k404NotFound);
    resp->setStatusMessage("Not Found");
    resp->setCloseConnection(true);
  }
}

#ifdef MUDUO_EXAMPLE_MAIN
// muduo's main as it is (port 8000, serves until killed): built, not run, by
// the target muduo_http_example, to show those calls build too.
int main() {
  EventLoop loop;
  HttpServer server(&loop, InetAddress(8000), "dummy");
  server.setHttpCallback(onRequest);
  server.start();
  loop.loop();
}
#else

namespace {

// Sends the three requests on one connection and returns all it reads
// until the server closes.
string fetchAll(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  string received;
  if (::connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0) {
    const string requests =
        "GET / HTTP/1.1\r\nHost: t\r\n\r\n"
        "GET /favicon.ico HTTP/1.1\r\nHost: t\r\n\r\n"
        "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n";
    if (::write(fd, requests.data(), requests.size()) == static_cast<ssize_t>(requests.size())) {
      char chunk[4096];
      ssize_t n;
      while ((n = ::read(fd, chunk, sizeof chunk)) > 0)
        received.append(chunk, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return received;
}

bool contains(const string& s, const string& part) { return s.find(part) != string::npos; }

}  // namespace

int main() {
  EventLoop loop;
  HttpServer server(&loop, InetAddress(0, true), "dummy");
  server.setHttpCallback(onRequest);
  server.start();

  string received;
  std::thread client([&] {
    received = fetchAll(server.listenAddress().port());
    loop.quit();
  });
  loop.loop();
  client.join();

  std::cout << received << std::endl;
  const bool ok =
      contains(received, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nServer: Muduo\r\n") &&
      contains(received, "<h1>Hello</h1>") &&
      contains(received, "Content-Type: image/png\r\nContent-Length: 16\r\n") &&
      contains(received, string(favicon, sizeof favicon)) &&
      contains(received, "HTTP/1.1 404 Not Found\r\n");
  if (!ok) {
    LOG_ERROR << "muduo_http_test: the answers are not what muduo's example gives";
    return 1;
  }
  return 0;
}
#endif

// Not an icon: the PNG signature and a few bytes of our own.
char favicon[16] = {'\x89', 'P', 'N', 'G', '\r',   '\n',   '\x1a', '\n',
                    'm',    'u', 'o', 'n', '\x00', '\x01', '\x02', '\x03'};
