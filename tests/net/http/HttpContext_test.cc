// HttpContext: the request parser, fed as the server feeds it
// (HttpTestParse.h): every limit and error answer, pipelining, pieces split
// at every byte, 100-continue, keep-alive.
#include <gtest/gtest.h>

#include <string>

#include "HttpTestParse.h"

namespace muon {
namespace net {
namespace test {
namespace {

const std::string kGet =
    "GET /index.html?a=1&b=2 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\n\r\n";

TEST(HttpContext, ParsesARequestLineAndFields) {
  ParseOutcome out = parseAll(kGet);
  ASSERT_EQ(out.error, HttpResponse::kUnknown);
  ASSERT_EQ(out.requests.size(), 1u);
  const HttpRequest& r = out.requests[0].request;
  EXPECT_EQ(r.method(), HttpRequest::kGet);
  EXPECT_STREQ(r.methodString(), "GET");
  EXPECT_EQ(r.path(), "/index.html");
  EXPECT_EQ(r.query(), "?a=1&b=2");  // muduo's: from '?' on
  EXPECT_EQ(r.getVersion(), HttpRequest::kHttp11);
  EXPECT_EQ(r.getHeader("Host"), "example.com");
  EXPECT_EQ(r.receiveTime(), Timestamp(1234567));
  EXPECT_EQ(r.body(), "");
  EXPECT_EQ(out.leftover, 0u);
}

TEST(HttpContext, KnowsMuduosMethods) {
  for (const char* method : {"GET", "POST", "HEAD", "PUT", "DELETE"}) {
    ParseOutcome out = parseAll(std::string(method) + " / HTTP/1.1\r\nHost: h\r\n\r\n");
    ASSERT_EQ(out.requests.size(), 1u) << method;
    EXPECT_STREQ(out.requests[0].request.methodString(), method);
  }
}

TEST(HttpContext, FieldNamesAreCaseInsensitive) {
  ParseOutcome out = parseAll("GET / HTTP/1.1\r\nHOST: h\r\ncontent-TYPE:  text/x \t\r\n\r\n");
  ASSERT_EQ(out.requests.size(), 1u);
  const HttpRequest& r = out.requests[0].request;
  EXPECT_EQ(r.getHeader("host"), "h");
  EXPECT_EQ(r.getHeader("Content-Type"), "text/x");  // white space around the value dropped
  EXPECT_EQ(r.getHeader("CONTENT-type"), "text/x");
  EXPECT_EQ(r.headers().count("content-type"), 1u);  // stored in lower case
  EXPECT_EQ(r.getHeader("Accept"), "");
}

TEST(HttpContext, RepeatedFieldsAreJoined) {
  ParseOutcome out = parseAll("GET / HTTP/1.1\r\nHost: h\r\nAccept: a\r\naccept: b\r\n\r\n");
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].request.getHeader("Accept"), "a, b");
  // An empty value joins nothing (no dangling ", ").
  out = parseAll("GET / HTTP/1.1\r\nHost: h\r\nA: \r\nA: x\r\nB: y\r\nB:\r\n\r\n");
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].request.getHeader("A"), "x");
  EXPECT_EQ(out.requests[0].request.getHeader("B"), "y");
}

TEST(HttpContext, ReadsAContentLengthBody) {
  ParseOutcome out = parseAll("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET");
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].request.body(), "hello");
  EXPECT_EQ(out.leftover, 3u);  // the next request's first bytes stay
}

TEST(HttpContext, AnswersPipelinedRequestsInOrder) {
  std::string input =
      "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
      "POST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
      "GET /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
  ParseOutcome out = parseAll(input);
  ASSERT_EQ(out.error, HttpResponse::kUnknown);
  ASSERT_EQ(out.requests.size(), 3u);
  EXPECT_EQ(out.requests[0].request.path(), "/1");
  EXPECT_EQ(out.requests[1].request.path(), "/2");
  EXPECT_EQ(out.requests[1].request.body(), "abc");
  EXPECT_EQ(out.requests[2].request.path(), "/3");
  EXPECT_FALSE(out.requests[2].keepAlive);
  EXPECT_EQ(out.leftover, 0u);
}

// The same requests come out wherever the input is cut: in two at every
// byte, and a byte at a time.
TEST(HttpContext, SplitAtEveryByteBoundaryGivesTheSameRequests) {
  std::string input =
      "\r\nPOST /a?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n"
      "X-Long: " +
      std::string(40, 'v') +
      "\r\n\r\n0123456789"
      "GET /b HTTP/1.0\nConnection: keep-alive\n\n"
      "PUT /c HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok";
  ParseOutcome whole = parseAll(input);
  ASSERT_EQ(whole.error, HttpResponse::kUnknown);
  ASSERT_EQ(whole.requests.size(), 3u);
  for (size_t cut = 0; cut <= input.size(); ++cut) {
    ParseOutcome out = parsePieces({input.substr(0, cut), input.substr(cut)});
    ASSERT_EQ(out.error, HttpResponse::kUnknown) << "cut at " << cut;
    ASSERT_EQ(out.requests.size(), 3u) << "cut at " << cut;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(sameRequest(out.requests[i].request, whole.requests[i].request))
          << "cut at " << cut << ", request " << i;
      EXPECT_EQ(out.requests[i].keepAlive, whole.requests[i].keepAlive) << "cut at " << cut;
    }
    EXPECT_EQ(out.leftover, 0u);
  }
  ParseOutcome bytes = parsePieces(chunks(input, 1));
  ASSERT_EQ(bytes.requests.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(sameRequest(bytes.requests[i].request, whole.requests[i].request)) << i;
  }
  // A byte at a time the third request's body comes after its fields: a 100.
  EXPECT_EQ(bytes.continues, std::vector<size_t>{2});
}

TEST(HttpContext, KeepAliveFollowsVersionAndConnection) {
  struct Case {
    const char* fields;
    const char* version;
    bool keepAlive;
  } cases[] = {
      {"", "HTTP/1.1", true},
      {"Connection: close\r\n", "HTTP/1.1", false},
      {"Connection: Close\r\n", "HTTP/1.1", false},
      {"Connection: keep-alive, close\r\n", "HTTP/1.1", false},
      {"Connection: Upgrade\r\n", "HTTP/1.1", true},
      {"", "HTTP/1.0", false},
      {"Connection: keep-alive\r\n", "HTTP/1.0", true},
      {"Connection: Upgrade, Keep-Alive\r\n", "HTTP/1.0", true},
  };
  for (const Case& c : cases) {
    ParseOutcome out =
        parseAll(std::string("GET / ") + c.version + "\r\nHost: h\r\n" + c.fields + "\r\n");
    ASSERT_EQ(out.requests.size(), 1u) << c.fields << c.version;
    EXPECT_EQ(out.requests[0].keepAlive, c.keepAlive) << c.fields << c.version;
  }
}

TEST(HttpContext, ExpectContinueAsksForA100OnceBeforeTheBody) {
  std::string head =
      "PUT /u HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 4\r\n\r\n";
  ParseOutcome out = parsePieces({head, "da", "ta"});
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].request.body(), "data");
  EXPECT_EQ(out.continues, std::vector<size_t>{0});
  // The body already there: no interim answer.
  EXPECT_TRUE(parseAll(head + "data").continues.empty());
  // HTTP/1.0 clients do not wait for one; nor is one due without a body.
  EXPECT_TRUE(
      parsePieces({"PUT /u HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n", "data"})
          .continues.empty());
  EXPECT_TRUE(
      parseAll("GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n").continues.empty());
}

TEST(HttpContext, AnOtherExpectationIs417) {
  EXPECT_EQ(
      parseAll("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx").error,
      HttpResponse::k417ExpectationFailed);
}

TEST(HttpContext, HeaderBytesOverTheLimitAre431) {
  HttpOptions options;
  options.maxHeaderBytes = 100;
  std::string line = "GET / HTTP/1.1\r\n";  // 16 bytes
  std::string host = "Host: h\r\n";         // 9
  std::string end = "\r\n";                 // 2
  std::string filler = "X: " + std::string(100 - 16 - 9 - 2 - 5, 'y') + "\r\n";
  std::string exact = line + host + filler + end;
  ASSERT_EQ(exact.size(), 100u);
  EXPECT_EQ(parseAll(exact, options).requests.size(), 1u);
  std::string over = line + host + "X: " + std::string(100 - 16 - 9 - 2 - 4, 'y') + "\r\n" + end;
  ASSERT_EQ(over.size(), 101u);
  EXPECT_EQ(parseAll(over, options).error, HttpResponse::k431RequestHeaderFieldsTooLarge);
  // Without a line end in sight: refused as soon as the bytes pass the limit.
  ParseOutcome endless = parseAll("GET /" + std::string(200, 'a'), options);
  EXPECT_EQ(endless.error, HttpResponse::k431RequestHeaderFieldsTooLarge);
  ParseOutcome trickle = parsePieces(chunks(line + "X: " + std::string(200, 'z'), 7), options);
  EXPECT_EQ(trickle.error, HttpResponse::k431RequestHeaderFieldsTooLarge);
  // The limit is per request: two requests of 100 bytes each pass.
  EXPECT_EQ(parseAll(exact + exact, options).requests.size(), 2u);
}

TEST(HttpContext, TooManyFieldsAre431) {
  HttpOptions options;
  options.maxHeaders = 5;
  std::string fields = "Host: h\r\n";
  for (int i = 0; i < 4; ++i) fields += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(parseAll("GET / HTTP/1.1\r\n" + fields + "\r\n", options).requests.size(), 1u);
  EXPECT_EQ(parseAll("GET / HTTP/1.1\r\n" + fields + "X-5: v\r\n\r\n", options).error,
            HttpResponse::k431RequestHeaderFieldsTooLarge);
}

TEST(HttpContext, ABodyOverTheLimitIs413BeforeItArrives) {
  HttpOptions options;
  options.maxBodyBytes = 10;
  std::string head = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ";
  EXPECT_EQ(parseAll(head + "10\r\n\r\n" + std::string(10, 'b'), options).requests.size(), 1u);
  ParseOutcome over = parseAll(head + "11\r\nExpect: 100-continue\r\n\r\n", options);
  EXPECT_EQ(over.error, HttpResponse::k413PayloadTooLarge);
  EXPECT_TRUE(over.continues.empty());  // refused, not invited
  EXPECT_EQ(parseAll(head + "99999999999999999999999999\r\n\r\n", options).error,
            HttpResponse::k413PayloadTooLarge);
}

TEST(HttpContext, ContentLengthMustBeDigits) {
  std::string head = "POST / HTTP/1.1\r\nHost: h\r\n";
  for (const char* bad : {"Content-Length: abc\r\n", "Content-Length: -1\r\n",
                          "Content-Length: 1 2\r\n", "Content-Length: \r\n",
                          "Content-Length: 5\r\nContent-Length: 6\r\n", "Content-Length: +3\r\n"}) {
    EXPECT_EQ(parseAll(head + bad + "\r\n").error, HttpResponse::k400BadRequest) << bad;
  }
  // The same value twice is one value (RFC 9112 6.3).
  ParseOutcome twice = parseAll(head + "Content-Length: 2\r\nContent-Length: 2\r\n\r\nok");
  ASSERT_EQ(twice.requests.size(), 1u);
  EXPECT_EQ(twice.requests[0].request.body(), "ok");
}

TEST(HttpContext, BadSyntaxIs400) {
  const char* bad[] = {
      "GET /\r\n\r\n",                       // no version (HTTP/0.9)
      "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",  // two spaces
      "GET / HTTP/1.1 \r\nHost: h\r\n\r\n",  // trailing space
      "G(T / HTTP/1.1\r\nHost: h\r\n\r\n",   // not a token
      "GET / http/1.1\r\nHost: h\r\n\r\n",   // version is case-sensitive
      "GET / HTTP/1.10\r\nHost: h\r\n\r\n",
      "GET / HTTP/1.x\r\nHost: h\r\n\r\n",
      "GET index.html HTTP/1.1\r\nHost: h\r\n\r\n",  // not origin or absolute form
      "GET http:///x HTTP/1.1\r\nHost: h\r\n\r\n",   // absolute form without authority
      "GET /a\rb HTTP/1.1\r\nHost: h\r\n\r\n",       // bare CR
      "GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n",       // control character
      "GET / HTTP/1.1\r\nHost : h\r\n\r\n",          // space before the colon
      "GET / HTTP/1.1\r\nHost: h\r\nNo colon\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\n: empty name\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n",  // obs-fold
      "GET / HTTP/1.1\r\nHost: h\r\nX: a\x7f\r\n\r\n",         // DEL in a value
      "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n",          // bare CR in a value
      "GET / HTTP/1.1\r\n\r\n",                                // HTTP/1.1 without Host
      "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",          // two Hosts
  };
  for (const char* input : bad) {
    ParseOutcome out = parseAll(input);
    EXPECT_EQ(out.error, HttpResponse::k400BadRequest) << input;
    EXPECT_TRUE(out.requests.empty()) << input;
  }
}

TEST(HttpContext, UnsupportedMethodsAndTransferCodingsAre501) {
  for (const char* input :
       {"PATCH / HTTP/1.1\r\nHost: h\r\n\r\n", "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
        "get / HTTP/1.1\r\nHost: h\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"}) {
    EXPECT_EQ(parseAll(input).error, HttpResponse::k501NotImplemented) << input;
  }
}

TEST(HttpContext, OtherVersionsAre505) {
  for (const char* input :
       {"GET / HTTP/2.0\r\n\r\n", "GET / HTTP/1.2\r\nHost: h\r\n\r\n", "GET / HTTP/0.9\r\n\r\n"}) {
    EXPECT_EQ(parseAll(input).error, HttpResponse::k505HttpVersionNotSupported) << input;
  }
}

TEST(HttpContext, StaysFailedUntilReset) {
  Buffer buf;
  HttpContext context;
  buf.append("BAD\r\n");
  EXPECT_FALSE(context.parseRequest(&buf, Timestamp()));
  buf.append(kGet);
  EXPECT_FALSE(context.parseRequest(&buf, Timestamp()));
  EXPECT_EQ(context.error(), HttpResponse::k400BadRequest);
  context.reset();
  EXPECT_EQ(context.error(), HttpResponse::kUnknown);
  ASSERT_TRUE(context.parseRequest(&buf, Timestamp()));
  EXPECT_TRUE(context.gotAll());
}

TEST(HttpContext, AcceptsAbsoluteFormBareLineFeedsAndLeadingEmptyLines) {
  ParseOutcome out = parseAll(
      "\r\n\nGET HTTP://example.com:80/x/y?q HTTP/1.1\nHost: example.com\n\n"
      "GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n");
  ASSERT_EQ(out.error, HttpResponse::kUnknown);
  ASSERT_EQ(out.requests.size(), 2u);
  EXPECT_EQ(out.requests[0].request.path(), "/x/y");
  EXPECT_EQ(out.requests[0].request.query(), "?q");
  EXPECT_EQ(out.requests[1].request.path(), "/");
}

TEST(HttpContext, InProgressOnceARequestHasBegun) {
  Buffer buf;
  HttpContext context;
  EXPECT_FALSE(context.inProgress());
  buf.append("\r\n\r\n");  // empty lines between requests begin none
  ASSERT_TRUE(context.parseRequest(&buf, Timestamp()));
  EXPECT_FALSE(context.inProgress());
  buf.append("GET / HTTP/1.1\r\nHo");
  ASSERT_TRUE(context.parseRequest(&buf, Timestamp()));
  EXPECT_TRUE(context.inProgress());
  buf.append("st: h\r\n\r\n");
  ASSERT_TRUE(context.parseRequest(&buf, Timestamp()));
  EXPECT_TRUE(context.gotAll());
  context.reset();
  EXPECT_FALSE(context.inProgress());
}

}  // namespace
}  // namespace test
}  // namespace net
}  // namespace muon
