// HttpRequest: one parsed HTTP/1.x request, as HttpContext fills it in and an
// HttpServer's callback reads it. A value (copyable, swappable); not
// thread-safe, like any value.
//
// muduo's names and meanings: method(), methodString(), path(), query() (the
// part of the target from '?' on, '?' included, empty without one),
// getVersion(), getHeader(), headers(), receiveTime(). muon adds body() (a
// Content-Length body) and case-insensitive header names: names are stored in
// lower case ("content-type"), getHeader() takes any case, and a field sent
// twice keeps both values joined by ", " (RFC 9110 5.3; an empty one is
// dropped) where muduo kept the last.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "muon/base/Timestamp.h"

namespace muon {
namespace net {

class HttpRequest {
 public:
  enum Method { kInvalid, kGet, kPost, kHead, kPut, kDelete };
  enum Version { kUnknown, kHttp10, kHttp11 };

  HttpRequest() = default;

  void setVersion(Version v) { version_ = v; }
  Version getVersion() const { return version_; }

  // [start, end) is one of GET POST HEAD PUT DELETE (case-sensitive, as
  // RFC 9110 says); false, and kInvalid, otherwise.
  bool setMethod(const char* start, const char* end);
  Method method() const { return method_; }
  // "GET" ... or "UNKNOWN" for kInvalid.
  const char* methodString() const;

  void setPath(const char* start, const char* end) { path_.assign(start, end); }
  const std::string& path() const { return path_; }
  void setQuery(const char* start, const char* end) { query_.assign(start, end); }
  const std::string& query() const { return query_; }

  void setReceiveTime(Timestamp t) { receiveTime_ = t; }
  Timestamp receiveTime() const { return receiveTime_; }

  // muduo's form: [start, colon) is the name, (colon, end) the value, with
  // white space around the value dropped.
  void addHeader(const char* start, const char* colon, const char* end);
  // The same with the parts apart (the value already trimmed).
  void addHeader(std::string_view field, std::string_view value);
  // The value of `field` (any case), or "" when the request has none.
  std::string getHeader(const std::string& field) const;
  // nullptr when absent; `lowerCaseField` must be in lower case.
  const std::string* findHeader(const std::string& lowerCaseField) const;
  const std::map<std::string, std::string>& headers() const { return headers_; }

  const std::string& body() const { return body_; }
  void setBody(std::string body) { body_ = std::move(body); }
  void appendBody(const char* data, size_t len) { body_.append(data, len); }

  // Empty again, keeping the strings' storage for the next request.
  void clear();
  void swap(HttpRequest& that) noexcept;

  // `field` in lower case (ASCII only), as headers() stores names.
  static std::string lowerCase(std::string_view field);

 private:
  Method method_ = kInvalid;
  Version version_ = kUnknown;
  std::string path_;
  std::string query_;
  Timestamp receiveTime_;
  std::map<std::string, std::string> headers_;
  std::string body_;
};

}  // namespace net
}  // namespace muon
