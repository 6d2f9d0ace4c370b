#include "muon/net/http/HttpResponse.h"

#include <cstdint>

#include "muon/net/Buffer.h"

namespace muon {
namespace net {

namespace {

// Appends the decimal digits of n.
void appendNumber(Buffer* output, uint64_t n) {
  char digits[20];
  size_t i = sizeof digits;
  do {
    digits[--i] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  output->append(digits + i, sizeof digits - i);
}

}  // namespace

const char* HttpResponse::reasonPhrase(int code) {
  switch (code) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

void HttpResponse::appendHeadToBuffer(Buffer* output) const {
  const int code = statusCode_;
  output->append("HTTP/1.1 ");
  appendNumber(output, static_cast<uint64_t>(code < 0 ? 0 : code));
  output->append(" ");
  output->append(statusMessage_.empty() ? std::string_view(reasonPhrase(code))
                                        : std::string_view(statusMessage_));
  output->append("\r\n");
  for (const auto& [key, value] : headers_) {
    output->append(key);
    output->append(": ");
    output->append(value);
    output->append("\r\n");
  }
  // 1xx and 204 answers have no body, so no length (RFC 9110 8.6).
  if (code >= 200 && code != 204) {
    output->append("Content-Length: ");
    appendNumber(output, body_.size());
    output->append("\r\n");
  }
  output->append(closeConnection_ ? std::string_view("Connection: close\r\n\r\n")
                                  : std::string_view("Connection: keep-alive\r\n\r\n"));
}

void HttpResponse::appendToBuffer(Buffer* output) const {
  appendHeadToBuffer(output);
  const int code = statusCode_;
  if (code >= 200 && code != 204) output->append(body_);
}

}  // namespace net
}  // namespace muon
