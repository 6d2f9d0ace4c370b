// HttpServer over loopback (port 0): keep-alive, pipelining, 100-continue,
// HEAD, the error answers and the close after them, the request and idle
// timeouts, several I/O threads, and curl as a real client.
#include <gtest/gtest.h>

#include <stdio.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "HttpTestServer.h"
#include "NetTestUtil.h"
#include "muon/net/EventLoopThread.h"
#include "muon/net/http/HttpRequest.h"
#include "muon/net/http/HttpResponse.h"
#include "muon/net/http/HttpServer.h"

namespace muon {
namespace net {
namespace test {
namespace {

// "/" says hello, "/echo" answers the request's body, "/close" closes after
// its answer; the rest is 404.
void testCallback(const HttpRequest& req, HttpResponse* resp) {
  if (req.path() == "/" || req.path() == "/close") {
    resp->setStatusCode(HttpResponse::k200Ok);
    resp->setContentType("text/plain");
    resp->setBody("hello " + req.query());
    if (req.path() == "/close") resp->setCloseConnection(true);
  } else if (req.path() == "/echo") {
    resp->setStatusCode(HttpResponse::k200Ok);
    resp->setBody(req.body());
  } else {
    resp->setStatusCode(HttpResponse::k404NotFound);
  }
}

struct Answer {
  std::string statusLine;
  std::string head;  // the fields, each line ending in \r\n
  std::string body;
  bool ok = false;
};

// Reads one answer: the head a byte at a time, then Content-Length bytes.
Answer readAnswer(int fd, int timeoutMs = 20000) {
  Answer a;
  std::string head;
  char c;
  while (head.size() < 4 || head.compare(head.size() - 4, 4, "\r\n\r\n") != 0) {
    if (!readExactly(fd, &c, 1, timeoutMs)) return a;
    head.push_back(c);
  }
  size_t eol = head.find("\r\n");
  a.statusLine = head.substr(0, eol);
  a.head = head.substr(eol + 2, head.size() - eol - 4);
  size_t length = 0;
  size_t at = a.head.find("Content-Length: ");
  if (at != std::string::npos) length = std::strtoul(a.head.c_str() + at + 16, nullptr, 10);
  a.body = std::string(length, '\0');
  a.ok = readExactly(fd, a.body.data(), length, timeoutMs);
  return a;
}

bool hasField(const Answer& a, const std::string& line) {
  return a.head.find(line + "\r\n") != std::string::npos;
}

TEST(HttpServer, KeepsAnHttp11ConnectionOpen) {
  HttpServerThread server(testCallback);
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 3; ++i) {
    std::string req = "GET /?n=" + std::to_string(i) + " HTTP/1.1\r\nHost: t\r\n\r\n";
    ASSERT_TRUE(writeAll(fd, req.data(), req.size()));
    Answer a = readAnswer(fd);
    ASSERT_TRUE(a.ok);
    EXPECT_EQ(a.statusLine, "HTTP/1.1 200 OK");
    EXPECT_TRUE(hasField(a, "Connection: keep-alive"));
    EXPECT_TRUE(hasField(a, "Content-Type: text/plain"));
    EXPECT_EQ(a.body, "hello ?n=" + std::to_string(i));
  }
  ::close(fd);
}

TEST(HttpServer, AnswersPipelinedRequestsInOrder) {
  HttpServerThread server(testCallback);
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  std::string reqs;
  for (int i = 0; i < 20; ++i) {
    reqs += "GET /?" + std::to_string(i) + " HTTP/1.1\r\nHost: t\r\n\r\n";
    reqs += "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\n#" +
            std::to_string(i % 10) + "#";
  }
  ASSERT_TRUE(writeAll(fd, reqs.data(), reqs.size()));
  for (int i = 0; i < 20; ++i) {
    Answer a = readAnswer(fd);
    ASSERT_TRUE(a.ok);
    EXPECT_EQ(a.body, "hello ?" + std::to_string(i));
    Answer b = readAnswer(fd);
    ASSERT_TRUE(b.ok);
    EXPECT_EQ(b.body, "#" + std::to_string(i % 10) + "#");
  }
  ::close(fd);
}

TEST(HttpServer, ClosesWhenTheRequestOrTheAnswerSaysSo) {
  HttpServerThread server(testCallback);
  struct Case {
    std::string request;
    bool closes;
  } cases[] = {
      {"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", true},
      {"GET / HTTP/1.0\r\n\r\n", true},
      {"GET /close HTTP/1.1\r\nHost: t\r\n\r\n", true},
      {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false},
  };
  for (const Case& c : cases) {
    int fd = connectTo(server.address());
    ASSERT_GE(fd, 0);
    // A second request behind the first: answered only if the first keeps it open.
    std::string both = c.request + "GET /?second HTTP/1.1\r\nHost: t\r\n\r\n";
    ASSERT_TRUE(writeAll(fd, both.data(), both.size()));
    Answer a = readAnswer(fd);
    ASSERT_TRUE(a.ok) << c.request;
    EXPECT_EQ(hasField(a, "Connection: close"), c.closes) << c.request;
    if (c.closes) {
      EXPECT_TRUE(readsEof(fd)) << c.request;
    } else {
      EXPECT_EQ(readAnswer(fd).body, "hello ?second");
    }
    ::close(fd);
  }
}

TEST(HttpServer, DefaultCallbackAnswers404AndCloses) {
  HttpServerThread server(nullptr);
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  std::string req = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_TRUE(writeAll(fd, req.data(), req.size()));
  Answer a = readAnswer(fd);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.statusLine, "HTTP/1.1 404 Not Found");
  EXPECT_TRUE(readsEof(fd));
  ::close(fd);
}

TEST(HttpServer, HeadGetsTheLengthWithoutTheBody) {
  HttpServerThread server(testCallback);
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  std::string req = "HEAD /?x HTTP/1.1\r\nHost: t\r\n\r\nGET /?y HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_TRUE(writeAll(fd, req.data(), req.size()));
  std::string head =
      readExactly(fd, std::string("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                  "Content-Length: 8\r\nConnection: keep-alive\r\n\r\n")
                          .size());
  EXPECT_NE(head.find("Content-Length: 8\r\n"), std::string::npos) << head;
  // The next bytes are the GET's answer, not a body.
  Answer a = readAnswer(fd);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.statusLine, "HTTP/1.1 200 OK");
  EXPECT_EQ(a.body, "hello ?y");
  ::close(fd);
}

TEST(HttpServer, SendsContinueThenTakesTheBody) {
  HttpServerThread server(testCallback);
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  std::string head =
      "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n";
  ASSERT_TRUE(writeAll(fd, head.data(), head.size()));
  EXPECT_EQ(readExactly(fd, 25), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(writeAll(fd, "body", 4));
  Answer a = readAnswer(fd);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.statusLine, "HTTP/1.1 200 OK");
  EXPECT_EQ(a.body, "body");
  ::close(fd);
}

// Each bad request gets its answer, with Connection: close, then the close.
TEST(HttpServer, ErrorAnswersCloseTheConnection) {
  HttpOptions options;
  options.maxHeaderBytes = 512;
  options.maxHeaders = 4;
  options.maxBodyBytes = 16;
  HttpServerThread server(testCallback, options);
  struct Case {
    std::string request;
    const char* statusLine;
  } cases[] = {
      {"GET / HTTP/1.1\r\nHost : t\r\n\r\n", "HTTP/1.1 400 Bad Request"},
      {"GET /" + std::string(600, 'a') + " HTTP/1.1\r\n",
       "HTTP/1.1 431 Request Header Fields Too Large"},
      {"GET / HTTP/1.1\r\nHost: t\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n",
       "HTTP/1.1 431 Request Header Fields Too Large"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 17\r\n\r\n",
       "HTTP/1.1 413 Content Too Large"},
      {"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n",
       "HTTP/1.1 501 Not Implemented"},
      {"PATCH / HTTP/1.1\r\nHost: t\r\n\r\n", "HTTP/1.1 501 Not Implemented"},
      {"GET / HTTP/1.2\r\nHost: t\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported"},
      {"PUT / HTTP/1.1\r\nHost: t\r\nExpect: x\r\nContent-Length: 1\r\n\r\n",
       "HTTP/1.1 417 Expectation Failed"},
  };
  for (const Case& c : cases) {
    int fd = connectTo(server.address());
    ASSERT_GE(fd, 0);
    // A good request after the bad one: never answered.
    std::string both = c.request + "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
    ASSERT_TRUE(writeAll(fd, both.data(), both.size()));
    Answer a = readAnswer(fd);
    ASSERT_TRUE(a.ok) << c.statusLine;
    EXPECT_EQ(a.statusLine, c.statusLine);
    EXPECT_TRUE(hasField(a, "Connection: close")) << c.statusLine;
    EXPECT_TRUE(readsEof(fd)) << c.statusLine;
    ::close(fd);
  }
}

TEST(HttpServer, AnIncompleteRequestTimesOutWith408) {
  HttpOptions options;
  options.requestTimeoutSeconds = 0.2;
  HttpServerThread server(testCallback, options);
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  // A request trickling in: its time runs from its first byte.
  auto start = Clock::now();
  ASSERT_TRUE(writeAll(fd, "GET / HTTP/1.1\r\n", 16));
  Answer a = readAnswer(fd, 5000);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.statusLine, "HTTP/1.1 408 Request Timeout");
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(190));
  EXPECT_TRUE(readsEof(fd));
  ::close(fd);
}

TEST(HttpServer, AnsweredRequestsDoNotTimeOut) {
  HttpOptions options;
  options.requestTimeoutSeconds = 0.3;
  HttpServerThread server(testCallback, options);
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  // For longer than the request timeout, every 50 ms the end of one request
  // and the start of the next arrive together: the connection is never
  // without a request under way, yet each request is done within 50 ms.
  const std::string first = "GET /?";
  auto rest = [](int i) { return std::to_string(i) + " HTTP/1.1\r\nHost: t\r\n\r\n"; };
  ASSERT_TRUE(writeAll(fd, first.data(), first.size()));
  for (int i = 0; i < 12; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string bytes = rest(i) + first;
    ASSERT_TRUE(writeAll(fd, bytes.data(), bytes.size()));
    Answer a = readAnswer(fd, 5000);
    ASSERT_TRUE(a.ok) << i;
    EXPECT_EQ(a.statusLine, "HTTP/1.1 200 OK") << i;
    EXPECT_EQ(a.body, "hello ?" + std::to_string(i));
  }
  ::close(fd);
}

TEST(HttpServer, AnIdleConnectionIsClosedQuietly) {
  HttpOptions options;
  options.idleTimeoutSeconds = 0.2;
  HttpServerThread server(testCallback, options);
  int fd = connectTo(server.address());
  ASSERT_GE(fd, 0);
  std::string req = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_TRUE(writeAll(fd, req.data(), req.size()));
  ASSERT_TRUE(readAnswer(fd).ok);
  auto start = Clock::now();
  EXPECT_TRUE(readsEof(fd));  // no 408: there was no request to answer
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(150));
  ::close(fd);
}

TEST(HttpServer, ServesConnectionsOnSeveralThreads) {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  HttpServerThread server(
      [&](const HttpRequest& req, HttpResponse* resp) {
        {
          std::lock_guard<std::mutex> lock(mutex);
          threads.insert(std::this_thread::get_id());
        }
        testCallback(req, resp);
      },
      HttpOptions(), 2);
  int fds[6];
  for (int& fd : fds) {
    fd = connectTo(server.address());
    ASSERT_GE(fd, 0);
  }
  for (int round = 0; round < 3; ++round) {
    for (int& fd : fds) {
      std::string req = "GET /?" + std::to_string(round) + " HTTP/1.1\r\nHost: t\r\n\r\n";
      ASSERT_TRUE(writeAll(fd, req.data(), req.size()));
    }
    for (int& fd : fds) EXPECT_EQ(readAnswer(fd).body, "hello ?" + std::to_string(round));
  }
  for (int fd : fds) ::close(fd);
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(threads.size(), 2u);  // connections go round robin to both I/O threads
}

// A client that pipelines requests and reads nothing back: past
// maxPendingOutputBytes of answers the server stops answering (and reading),
// so what it holds stays bounded; once the client reads, every answer comes,
// in order.
TEST(HttpServer, AClientThatDoesNotReadIsNotAnsweredWithoutBound) {
  HttpOptions options;
  options.maxPendingOutputBytes = 64 * 1024;
  std::atomic<int> answered{0};
  const std::string big(64 * 1024, 'b');
  HttpServerThread server(
      [&](const HttpRequest& req, HttpResponse* resp) {
        ++answered;
        resp->setStatusCode(HttpResponse::k200Ok);
        resp->addHeader("X-Query", req.query());
        resp->setBody(big);
      },
      options);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  int small = 64 * 1024;  // the client's kernel buffer holds few answers
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  InetAddress addr = server.address();
  ASSERT_EQ(::connect(fd, addr.getSockAddr(), addr.sockLen()), 0);
  const int kRequests = 1000;  // 64 MiB of answers
  std::string reqs;
  for (int i = 0; i < kRequests; ++i)
    reqs += "GET /?" + std::to_string(i) + " HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_TRUE(writeAll(fd, reqs.data(), reqs.size()));
  // Wait until the server stops answering (the count holds for 300 ms).
  int last = -1;
  auto steadySince = Clock::now();
  while (Clock::now() - steadySince < std::chrono::milliseconds(300)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int now = answered.load();
    if (now != last) {
      last = now;
      steadySince = Clock::now();
    }
  }
  // The kernel's buffers on both sides (a few MiB on loopback) and the
  // 64 KiB allowed: far fewer than all.
  EXPECT_LT(last, kRequests / 2);
  for (int i = 0; i < kRequests; ++i) {
    Answer a = readAnswer(fd, 5000);
    ASSERT_TRUE(a.ok) << i;
    ASSERT_TRUE(hasField(a, "X-Query: ?" + std::to_string(i))) << i;
    ASSERT_EQ(a.body.size(), big.size());
  }
  EXPECT_EQ(answered.load(), kRequests);
  ::close(fd);
}

TEST(HttpServer, CurlReusesTheConnectionAndPostsWithContinue) {
  if (!haveCurl()) GTEST_SKIP() << "curl is not installed (./build.sh installs it)";
  HttpServerThread server(testCallback);
  std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  bool ok = false;
  // Two URLs in one run: curl reuses the connection when it is kept alive.
  std::string out = runCurl(
      "--max-time 20 -w '[%{http_code} %{num_connects}]' " + base + "/?a " + base + "/?b", &ok);
  ASSERT_TRUE(ok) << out;
  EXPECT_EQ(out, "hello ?a[200 1]hello ?b[200 0]");
  // A body behind Expect: 100-continue, as curl sends large uploads; curl
  // waits for the 100 (up to 30 s here, longer than the 5 s it is given).
  std::string body(5000, 'p');
  out = runCurl("--max-time 5 --expect100-timeout 30 -H 'Expect: 100-continue' --data-binary " +
                    body + " " + base + "/echo",
                &ok);
  ASSERT_TRUE(ok) << out;
  EXPECT_EQ(out, body);
  out = runCurl("--max-time 20 -o /dev/null -w '%{http_code}' " + base + "/missing", &ok);
  ASSERT_TRUE(ok) << out;
  EXPECT_EQ(out, "404");
}

}  // namespace
}  // namespace test
}  // namespace net
}  // namespace muon
