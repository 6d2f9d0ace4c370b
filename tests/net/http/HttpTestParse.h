// Drives an HttpContext as HttpServer does, over input given in pieces, and
// records what came out: the requests (with their keep-alive), where a
// "100 Continue" would have been sent, and the error that ended it.
#pragma once

#include <string>
#include <vector>

#include "muon/net/Buffer.h"
#include "muon/net/http/HttpContext.h"

namespace muon {
namespace net {
namespace test {

struct ParsedRequest {
  HttpRequest request;
  bool keepAlive = false;
};

struct ParseOutcome {
  std::vector<ParsedRequest> requests;
  // For each "100 Continue": how many requests had been completed before it.
  std::vector<size_t> continues;
  HttpResponse::HttpStatusCode error = HttpResponse::kUnknown;
  size_t leftover = 0;  // bytes left unparsed in the buffer at the end
};

inline ParseOutcome parsePieces(const std::vector<std::string>& pieces,
                                const HttpOptions& options = HttpOptions()) {
  ParseOutcome out;
  Buffer buf;
  HttpContext context(options);
  for (const std::string& piece : pieces) {
    buf.append(piece);
    while (true) {
      if (!context.parseRequest(&buf, Timestamp(1234567))) {
        out.error = context.error();
        out.leftover = buf.readableBytes();
        return out;
      }
      if (!context.gotAll()) {
        if (context.takeContinue()) out.continues.push_back(out.requests.size());
        break;
      }
      out.requests.push_back({context.request(), context.keepAlive()});
      context.reset();
    }
  }
  out.leftover = buf.readableBytes();
  return out;
}

inline ParseOutcome parseAll(const std::string& input, const HttpOptions& options = HttpOptions()) {
  return parsePieces({input}, options);
}

// `input` split into pieces of `size` bytes (the last may be shorter).
inline std::vector<std::string> chunks(const std::string& input, size_t size) {
  std::vector<std::string> pieces;
  for (size_t i = 0; i < input.size(); i += size) pieces.push_back(input.substr(i, size));
  return pieces;
}

inline bool sameRequest(const HttpRequest& a, const HttpRequest& b) {
  return a.method() == b.method() && a.getVersion() == b.getVersion() && a.path() == b.path() &&
         a.query() == b.query() && a.headers() == b.headers() && a.body() == b.body();
}

}  // namespace test
}  // namespace net
}  // namespace muon
