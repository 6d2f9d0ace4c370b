// HttpResponse: what an HttpServer's callback fills in to answer one request;
// the server serialises it with appendToBuffer(). A value; not thread-safe.
//
// muduo's names and meanings: HttpResponse(close), setStatusCode,
// setStatusMessage, setContentType, addHeader, setBody, setCloseConnection,
// closeConnection, appendToBuffer. Differences, all in what is written:
// the status line is "HTTP/1.1 <code> <message>" with the code's standard
// reason phrase when no message was set; Content-Length is always written
// (muduo omitted it on a closing answer), except for 1xx and 204 answers,
// which carry no body; header fields are written in the order they were
// added (muduo sorted them). appendToBuffer writes Content-Length and
// Connection itself: do not add them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace muon {
namespace net {

class Buffer;

class HttpResponse {
 public:
  // muduo's four names, and the codes muon's server answers with.
  enum HttpStatusCode {
    kUnknown,
    k100Continue = 100,
    k200Ok = 200,
    k204NoContent = 204,
    k301MovedPermanently = 301,
    k302Found = 302,
    k304NotModified = 304,
    k400BadRequest = 400,
    k401Unauthorized = 401,
    k403Forbidden = 403,
    k404NotFound = 404,
    k405MethodNotAllowed = 405,
    k408RequestTimeout = 408,
    k413PayloadTooLarge = 413,
    k417ExpectationFailed = 417,
    k431RequestHeaderFieldsTooLarge = 431,
    k500InternalServerError = 500,
    k501NotImplemented = 501,
    k503ServiceUnavailable = 503,
    k505HttpVersionNotSupported = 505,
  };

  // close: whether the connection is to be closed after this answer (the
  // server's choice from the request's version and Connection field; the
  // callback may change it with setCloseConnection).
  explicit HttpResponse(bool close) : closeConnection_(close) {}

  void setStatusCode(HttpStatusCode code) { statusCode_ = code; }
  HttpStatusCode statusCode() const { return statusCode_; }
  void setStatusMessage(std::string message) { statusMessage_ = std::move(message); }
  const std::string& statusMessage() const { return statusMessage_; }

  void setCloseConnection(bool on) { closeConnection_ = on; }
  bool closeConnection() const { return closeConnection_; }

  void setContentType(std::string_view contentType) { addHeader("Content-Type", contentType); }
  void addHeader(std::string_view key, std::string_view value) {
    if (headers_.empty()) headers_.reserve(4);  // one allocation for the usual few
    headers_.emplace_back(std::string(key), std::string(value));
  }
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }

  void setBody(std::string body) { body_ = std::move(body); }
  const std::string& body() const { return body_; }

  // The whole answer: status line, header fields, blank line, body.
  void appendToBuffer(Buffer* output) const;
  // The same without the body (Content-Length still the body's): the answer
  // to a HEAD request.
  void appendHeadToBuffer(Buffer* output) const;

  // The standard reason phrase of `code` ("Not Found"), "Unknown" if none.
  static const char* reasonPhrase(int code);

 private:
  HttpStatusCode statusCode_ = kUnknown;
  std::string statusMessage_;
  bool closeConnection_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string body_;
};

}  // namespace net
}  // namespace muon
