// HttpResponse: what appendToBuffer writes.
#include <gtest/gtest.h>

#include <string>

#include "muon/net/Buffer.h"
#include "muon/net/http/HttpResponse.h"

namespace muon {
namespace net {
namespace {

std::string serialise(const HttpResponse& response, bool head = false) {
  Buffer buf;
  if (head) {
    response.appendHeadToBuffer(&buf);
  } else {
    response.appendToBuffer(&buf);
  }
  return buf.retrieveAllAsString();
}

TEST(HttpResponse, WritesStatusFieldsInOrderLengthAndBody) {
  HttpResponse response(false);
  response.setStatusCode(HttpResponse::k200Ok);
  response.setStatusMessage("OK");
  response.setContentType("text/plain");
  response.addHeader("Server", "muon");
  response.setBody("Hello, World!");
  EXPECT_EQ(serialise(response),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nServer: muon\r\n"
            "Content-Length: 13\r\nConnection: keep-alive\r\n\r\nHello, World!");
}

TEST(HttpResponse, ClosingAnswerSaysSoAndKeepsItsLength) {
  HttpResponse response(true);
  response.setStatusCode(HttpResponse::k404NotFound);
  EXPECT_TRUE(response.closeConnection());
  // No message set: the standard reason phrase.
  EXPECT_EQ(serialise(response),
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  response.setCloseConnection(false);
  EXPECT_FALSE(response.closeConnection());
}

TEST(HttpResponse, HeadAnswerHasTheLengthButNotTheBody) {
  HttpResponse response(false);
  response.setStatusCode(HttpResponse::k200Ok);
  response.setBody("12345");
  EXPECT_EQ(serialise(response, true),
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n");
}

TEST(HttpResponse, NoContentHasNoLengthNorBody) {
  HttpResponse response(false);
  response.setStatusCode(HttpResponse::k204NoContent);
  response.setBody("ignored");
  EXPECT_EQ(serialise(response), "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
}

TEST(HttpResponse, ReasonPhrases) {
  EXPECT_STREQ(HttpResponse::reasonPhrase(431), "Request Header Fields Too Large");
  EXPECT_STREQ(HttpResponse::reasonPhrase(413), "Content Too Large");
  EXPECT_STREQ(HttpResponse::reasonPhrase(999), "Unknown");
}

}  // namespace
}  // namespace net
}  // namespace muon
