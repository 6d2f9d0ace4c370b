// Fuzz target: HttpContext, the parser of bytes from any client. The first
// byte picks where the rest is cut in two; the rest is a connection's input.
// Properties, beyond not crashing (ASan+UBSan):
//  - the input cut in two, or fed a byte at a time, gives the same requests
//    and the same error as the input whole;
//  - a parsed request written back in plain form (origin-form target, its
//    fields, its body with a Content-Length) parses to the same request, with
//    no error and nothing left over;
//  - no request exceeds the limits: fields, body size;
//  - every byte is either consumed or left in the buffer.
// Small limits, so that inputs reach them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "FuzzCheck.h"
#include "muon/net/Buffer.h"
#include "muon/net/http/HttpContext.h"

using muon::Timestamp;
using muon::net::Buffer;
using muon::net::HttpContext;
using muon::net::HttpOptions;
using muon::net::HttpRequest;
using muon::net::HttpResponse;

namespace {

HttpOptions smallLimits() {
  HttpOptions options;
  options.maxHeaderBytes = 512;
  options.maxHeaders = 8;
  options.maxBodyBytes = 256;
  return options;
}

struct Outcome {
  std::vector<HttpRequest> requests;
  HttpResponse::HttpStatusCode error = HttpResponse::kUnknown;
  size_t leftover = 0;
  size_t consumed = 0;
};

Outcome parse(const std::vector<std::string>& pieces) {
  Outcome out;
  Buffer buf;
  HttpContext context(smallLimits());
  size_t appended = 0;
  for (const std::string& piece : pieces) {
    buf.append(piece);
    appended += piece.size();
    while (true) {
      if (!context.parseRequest(&buf, Timestamp())) {
        FUZZ_CHECK(context.error() != HttpResponse::kUnknown);
        out.error = context.error();
        out.leftover = buf.readableBytes();
        out.consumed = appended - out.leftover;
        return out;
      }
      FUZZ_CHECK(context.error() == HttpResponse::kUnknown);
      if (!context.gotAll()) {
        context.takeContinue();
        break;
      }
      out.requests.push_back(context.request());
      context.reset();
    }
  }
  out.leftover = buf.readableBytes();
  out.consumed = appended - out.leftover;
  return out;
}

bool same(const HttpRequest& a, const HttpRequest& b) {
  return a.method() == b.method() && a.getVersion() == b.getVersion() && a.path() == b.path() &&
         a.query() == b.query() && a.headers() == b.headers() && a.body() == b.body();
}

void checkSame(const Outcome& a, const Outcome& b) {
  FUZZ_CHECK(a.error == b.error);
  FUZZ_CHECK(a.requests.size() == b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) FUZZ_CHECK(same(a.requests[i], b.requests[i]));
  // Without an error every piece was fed, so the same bytes are left over.
  if (a.error == HttpResponse::kUnknown) FUZZ_CHECK(a.leftover == b.leftover);
}

// The request in plain form: what a careful client would have sent.
std::string writeBack(const HttpRequest& r) {
  std::string s = std::string(r.methodString()) + " " + r.path() + r.query() +
                  (r.getVersion() == HttpRequest::kHttp11 ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");
  for (const auto& [name, value] : r.headers()) s += name + ": " + value + "\r\n";
  s += "\r\n";
  s += r.body();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t cut = input.empty() ? 0 : data[0] % (input.size() + 1);

  Outcome whole = parse({input});
  FUZZ_CHECK(whole.consumed + whole.leftover == input.size());
  checkSame(whole, parse({input.substr(0, cut), input.substr(cut)}));
  if (input.size() <= 1024) {
    std::vector<std::string> bytes;
    for (char c : input) bytes.emplace_back(1, c);
    checkSame(whole, parse(bytes));
  }

  const HttpOptions limits = smallLimits();
  for (const HttpRequest& request : whole.requests) {
    FUZZ_CHECK(request.method() != HttpRequest::kInvalid);
    FUZZ_CHECK(request.headers().size() <= limits.maxHeaders);
    FUZZ_CHECK(request.body().size() <= limits.maxBodyBytes);
    FUZZ_CHECK(!request.path().empty() && request.path()[0] == '/');
    FUZZ_CHECK(request.query().empty() || request.query()[0] == '?');
    const std::string plain = writeBack(request);
    Outcome again = parse({plain});
    // Written back, the fields may be longer than sent (a joined field gains
    // ", "), so the header limit may now refuse it; nothing else may.
    if (again.error == HttpResponse::k431RequestHeaderFieldsTooLarge) continue;
    FUZZ_CHECK(again.error == HttpResponse::kUnknown);
    FUZZ_CHECK(again.requests.size() == 1);
    FUZZ_CHECK(same(again.requests[0], request));
    FUZZ_CHECK(again.leftover == 0);
  }
  return 0;
}
