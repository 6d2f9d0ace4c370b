#include "muon/net/http/HttpContext.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "muon/net/Buffer.h"

namespace muon {
namespace net {

namespace {

// RFC 9110 5.6.2: the characters of a token (method, field name), as a
// table: every byte of every request line and field name is looked up.
struct TokenChars {
  bool is[256] = {};
  TokenChars() {
    for (int c = '0'; c <= '9'; ++c) is[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) is[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) is[c] = true;
    for (const char* p = "!#$%&'*+-.^_`|~"; *p != '\0'; ++p)
      is[static_cast<unsigned char>(*p)] = true;
  }
};
const TokenChars kTokenChars;

bool isTokenChar(unsigned char c) { return kTokenChars.is[c]; }

// The fields the parser reads, as keys made once (findHeader takes a
// std::string; "transfer-encoding" is too long for the small-string buffer).
const std::string kHost = "host";
const std::string kTransferEncoding = "transfer-encoding";
const std::string kContentLength = "content-length";
const std::string kConnection = "connection";
const std::string kExpect = "expect";

bool isToken(const char* begin, const char* end) {
  if (begin == end) return false;
  for (const char* p = begin; p < end; ++p) {
    if (!isTokenChar(static_cast<unsigned char>(*p))) return false;
  }
  return true;
}

// A control character other than HTAB (obs-text, 0x80 and up, is allowed).
bool hasControl(const char* begin, const char* end) {
  for (const char* p = begin; p < end; ++p) {
    unsigned char c = static_cast<unsigned char>(*p);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return true;
  }
  return false;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool equalsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool startsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && equalsNoCase(s.substr(0, prefix.size()), prefix);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls f(element) for each trimmed element of a comma-separated list;
// empty elements are skipped (RFC 9110 5.6.1). Stops when f returns false.
template <typename F>
bool forEachListElement(std::string_view list, F f) {
  while (true) {
    size_t comma = list.find(',');
    std::string_view element = trim(list.substr(0, comma));
    if (!element.empty() && !f(element)) return false;
    if (comma == std::string_view::npos) return true;
    list.remove_prefix(comma + 1);
  }
}

enum class Length { kOk, kBad, kTooLarge };

// Content-Length: digits; a list of equal values (a field sent twice, joined
// by ", ") is taken as one (RFC 9112 6.3).
Length parseContentLength(std::string_view value, size_t limit, size_t* length) {
  bool seen = false;
  bool tooLarge = false;
  uint64_t first = 0;
  bool ok = forEachListElement(value, [&](std::string_view element) {
    uint64_t n = 0;
    bool big = false;
    for (char c : element) {
      if (!isDigit(c)) return false;
      if (n > (UINT64_MAX - 9) / 10) {
        big = true;  // keep checking the syntax
      } else {
        n = n * 10 + static_cast<uint64_t>(c - '0');
      }
    }
    if (big) n = UINT64_MAX;
    if (seen && n != first) return false;
    seen = true;
    first = n;
    tooLarge = n > limit;
    return true;
  });
  if (!ok || !seen) return Length::kBad;
  if (tooLarge) return Length::kTooLarge;
  *length = static_cast<size_t>(first);
  return Length::kOk;
}

}  // namespace

void HttpContext::reset() {
  state_ = kExpectRequestLine;
  request_.clear();
  error_ = HttpResponse::kUnknown;
  headerBytes_ = 0;
  headerCount_ = 0;
  scanned_ = 0;
  bodyRemaining_ = 0;
  keepAlive_ = false;
  continueWanted_ = false;
}

bool HttpContext::parseRequest(Buffer* buf, Timestamp receiveTime) {
  if (error_ != HttpResponse::kUnknown) return false;
  while (state_ == kExpectRequestLine || state_ == kExpectHeaders) {
    const char* begin = buf->peek();
    const size_t readable = buf->readableBytes();
    // Bytes already searched are not searched again: a request line sent a
    // byte at a time costs linear time, not quadratic.
    const void* found =
        readable > scanned_ ? std::memchr(begin + scanned_, '\n', readable - scanned_) : nullptr;
    if (found == nullptr) {
      scanned_ = readable;
      if (headerBytes_ + readable > options_.maxHeaderBytes) {
        return fail(HttpResponse::k431RequestHeaderFieldsTooLarge);
      }
      return true;
    }
    const char* eol = static_cast<const char*>(found);
    const size_t lineBytes = static_cast<size_t>(eol - begin) + 1;
    headerBytes_ += lineBytes;
    scanned_ = 0;
    if (headerBytes_ > options_.maxHeaderBytes) {
      return fail(HttpResponse::k431RequestHeaderFieldsTooLarge);
    }
    const char* end = eol;
    if (end > begin && end[-1] == '\r') --end;
    bool ok = state_ == kExpectRequestLine ? processRequestLine(begin, end, receiveTime)
                                           : processHeaderLine(begin, end);
    buf->retrieve(lineBytes);
    if (!ok) return false;
  }
  if (state_ == kExpectBody) {
    size_t n = std::min(buf->readableBytes(), bodyRemaining_);
    request_.appendBody(buf->peek(), n);
    buf->retrieve(n);
    bodyRemaining_ -= n;
    if (bodyRemaining_ == 0) {
      state_ = kGotAll;
      continueWanted_ = false;
    }
  }
  return true;
}

bool HttpContext::processRequestLine(const char* begin, const char* end, Timestamp receiveTime) {
  if (begin == end) return true;  // an empty line before the request line: skipped
  if (hasControl(begin, end)) return fail(HttpResponse::k400BadRequest);
  const char* space = std::find(begin, end, ' ');
  if (space == end || !isToken(begin, space)) return fail(HttpResponse::k400BadRequest);
  const char* methodEnd = space;
  const char* target = space + 1;
  space = std::find(target, end, ' ');
  if (space == end || space == target) return fail(HttpResponse::k400BadRequest);
  const char* targetEnd = space;
  std::string_view version(space + 1, static_cast<size_t>(end - space - 1));
  // "HTTP/" DIGIT "." DIGIT, case-sensitive (RFC 9112 2.3).
  if (version.size() != 8 || version.compare(0, 5, "HTTP/") != 0 || !isDigit(version[5]) ||
      version[6] != '.' || !isDigit(version[7])) {
    return fail(HttpResponse::k400BadRequest);
  }
  if (version == "HTTP/1.1") {
    request_.setVersion(HttpRequest::kHttp11);
  } else if (version == "HTTP/1.0") {
    request_.setVersion(HttpRequest::kHttp10);
  } else {
    return fail(HttpResponse::k505HttpVersionNotSupported);
  }
  if (!request_.setMethod(begin, methodEnd)) return fail(HttpResponse::k501NotImplemented);
  if (!processTarget(target, targetEnd)) return false;
  request_.setReceiveTime(receiveTime);
  state_ = kExpectHeaders;
  return true;
}

// origin form "/path?query", or absolute form "http://authority/path?query",
// whose path and query are kept (the authority is the Host's business).
bool HttpContext::processTarget(const char* begin, const char* end) {
  std::string_view target(begin, static_cast<size_t>(end - begin));
  if (target.front() != '/') {
    size_t skip;
    if (startsWithNoCase(target, "http://")) {
      skip = 7;
    } else if (startsWithNoCase(target, "https://")) {
      skip = 8;
    } else {
      return fail(HttpResponse::k400BadRequest);  // "*" and authority form: OPTIONS, CONNECT
    }
    size_t pathStart = target.find_first_of("/?", skip);
    if (pathStart == skip) return fail(HttpResponse::k400BadRequest);  // no authority
    target.remove_prefix(pathStart == std::string_view::npos ? target.size() : pathStart);
  }
  size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  if (path.empty()) path = "/";
  request_.setPath(path.data(), path.data() + path.size());
  if (question != std::string_view::npos) {
    request_.setQuery(target.data() + question, target.data() + target.size());
  }
  return true;
}

bool HttpContext::processHeaderLine(const char* begin, const char* end) {
  if (begin == end) return finishHeaders();
  const char* colon = std::find(begin, end, ':');
  // The name is a token, so these are rejected: white space before the colon
  // (RFC 9112 5.1), a field without a colon, and a line starting with white
  // space, which would continue the previous field (obs-fold, RFC 9112 5.2).
  if (colon == end || !isToken(begin, colon)) return fail(HttpResponse::k400BadRequest);
  if (hasControl(colon + 1, end)) return fail(HttpResponse::k400BadRequest);
  if (++headerCount_ > options_.maxHeaders) {
    return fail(HttpResponse::k431RequestHeaderFieldsTooLarge);
  }
  std::string_view value = trim(std::string_view(colon + 1, static_cast<size_t>(end - colon - 1)));
  request_.addHeader(std::string_view(begin, static_cast<size_t>(colon - begin)), value);
  return true;
}

bool HttpContext::finishHeaders() {
  const bool http11 = request_.getVersion() == HttpRequest::kHttp11;
  // HTTP/1.1 needs exactly one Host (RFC 9112 3.2); a second one was joined
  // to the first with a comma, which no host name holds.
  const std::string* host = request_.findHeader(kHost);
  if ((http11 && host == nullptr) || (host != nullptr && host->find(',') != std::string::npos)) {
    return fail(HttpResponse::k400BadRequest);
  }
  // Transfer codings (chunked above all) are not decoded: refused.
  if (request_.findHeader(kTransferEncoding) != nullptr) {
    return fail(HttpResponse::k501NotImplemented);
  }
  size_t length = 0;
  if (const std::string* value = request_.findHeader(kContentLength)) {
    switch (parseContentLength(*value, options_.maxBodyBytes, &length)) {
      case Length::kOk: break;
      case Length::kBad: return fail(HttpResponse::k400BadRequest);
      case Length::kTooLarge: return fail(HttpResponse::k413PayloadTooLarge);
    }
  }
  keepAlive_ = http11;
  if (const std::string* connection = request_.findHeader(kConnection)) {
    forEachListElement(*connection, [this](std::string_view option) {
      if (equalsNoCase(option, "close")) {
        keepAlive_ = false;
        return false;  // close wins
      }
      if (equalsNoCase(option, "keep-alive")) keepAlive_ = true;
      return true;
    });
  }
  if (const std::string* expect = request_.findHeader(kExpect)) {
    if (!equalsNoCase(*expect, "100-continue")) return fail(HttpResponse::k417ExpectationFailed);
    // An HTTP/1.0 client does not wait for 100 (RFC 9110 10.1.1).
    continueWanted_ = http11 && length > 0;
  }
  bodyRemaining_ = length;
  state_ = length > 0 ? kExpectBody : kGotAll;
  return true;
}

}  // namespace net
}  // namespace muon
