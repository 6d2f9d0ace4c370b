// HttpContext: the incremental parser of one connection's HTTP/1.x requests.
// Feed it the connection's input buffer with parseRequest() as bytes arrive,
// in pieces of any size; it consumes what it has parsed and leaves the rest,
// including the next pipelined request, in the buffer. One connection's
// context is used by its loop thread only.
//
// muduo's names: parseRequest(), gotAll(), reset(), request(). A caller
// loops: parseRequest(); when gotAll(), answer request(), reset(), and parse
// again (the buffer may hold more requests). When parseRequest() returns
// false the request is bad: error() is the status to answer with, after
// which the connection is closed; the context stays failed until reset().
//
// What it accepts (RFC 9112): "METHOD SP target SP HTTP/1.x" with target in
// origin form ("/path?query") or absolute form ("http://host/path"); lines end
// in CRLF or a bare LF; empty lines before a request line are skipped; header
// fields "name: value" with a token name. Answers:
//   400  bad syntax: a malformed request line or field, a control character,
//        white space before a field's colon, a folded field (obs-fold), an
//        HTTP/1.1 request without exactly one Host, a bad Content-Length
//   431  request line + fields over HttpOptions::maxHeaderBytes, or more than
//        maxHeaders fields
//   413  a Content-Length over maxBodyBytes (found before the body is read)
//   417  an Expect other than 100-continue
//   501  a well-formed method other than GET POST HEAD PUT DELETE, or any
//        Transfer-Encoding: chunked (and every other transfer coding) is
//        refused, not decoded; a client must send a Content-Length body
//   505  a version HTTP/d.d other than 1.0 and 1.1
// Timeouts are not the parser's: HttpServer keeps them (408).
#pragma once

#include <cstddef>

#include "muon/base/Timestamp.h"
#include "muon/net/http/HttpOptions.h"
#include "muon/net/http/HttpRequest.h"
#include "muon/net/http/HttpResponse.h"

namespace muon {
namespace net {

class Buffer;

class HttpContext {
 public:
  enum HttpRequestParseState { kExpectRequestLine, kExpectHeaders, kExpectBody, kGotAll };

  HttpContext() : HttpContext(HttpOptions()) {}
  explicit HttpContext(const HttpOptions& options) : options_(options) {}

  // Parses what `buf` holds, up to the end of one request. false: the
  // request is bad, see error(). receiveTime becomes the request's
  // receiveTime() (the call that parses its request line sets it).
  bool parseRequest(Buffer* buf, Timestamp receiveTime);

  HttpRequestParseState state() const { return state_; }
  bool expectRequestLine() const { return state_ == kExpectRequestLine; }
  bool expectHeaders() const { return state_ == kExpectHeaders; }
  bool expectBody() const { return state_ == kExpectBody; }
  bool gotAll() const { return state_ == kGotAll; }

  // Ready for the next request (the request's storage is kept for reuse).
  void reset();

  const HttpRequest& request() const { return request_; }
  HttpRequest& request() { return request_; }

  // The status to answer a bad request with; kUnknown unless parseRequest()
  // returned false.
  HttpResponse::HttpStatusCode error() const { return error_; }
  // Once the header fields are in: whether the client keeps the connection
  // open after the answer (HTTP/1.1 unless "Connection: close"; HTTP/1.0
  // only with "Connection: keep-alive").
  bool keepAlive() const { return keepAlive_; }
  // true once per request, when its header fields asked for
  // "Expect: 100-continue" and its body is still to come: the caller sends
  // "HTTP/1.1 100 Continue" then. A request whose body arrived with its
  // header fields (gotAll() on the same call) needs no interim answer.
  bool takeContinue() {
    bool wanted = continueWanted_;
    continueWanted_ = false;
    return wanted;
  }
  // Whether a request's line has been parsed and the request is not
  // complete. Bytes of a request line still unparsed in the buffer are the
  // caller's to check. Empty lines between requests (some clients send one
  // after a body) begin nothing; they count towards maxHeaderBytes.
  bool inProgress() const { return state_ != kExpectRequestLine; }

  const HttpOptions& options() const { return options_; }

 private:
  bool fail(HttpResponse::HttpStatusCode code) {
    error_ = code;
    return false;
  }
  bool processRequestLine(const char* begin, const char* end, Timestamp receiveTime);
  bool processTarget(const char* begin, const char* end);
  bool processHeaderLine(const char* begin, const char* end);
  bool finishHeaders();

  HttpOptions options_;
  HttpRequestParseState state_ = kExpectRequestLine;
  HttpRequest request_;
  HttpResponse::HttpStatusCode error_ = HttpResponse::kUnknown;
  size_t headerBytes_ = 0;  // of this request's line and fields consumed
  size_t headerCount_ = 0;
  size_t scanned_ = 0;  // bytes of the buffer known to hold no '\n'
  size_t bodyRemaining_ = 0;
  bool keepAlive_ = false;
  bool continueWanted_ = false;
};

}  // namespace net
}  // namespace muon
