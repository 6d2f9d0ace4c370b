#include "muon/net/http/HttpRequest.h"

#include <cstring>
#include <utility>

namespace muon {
namespace net {

namespace {

bool equals(const char* start, const char* end, const char* word) {
  size_t n = std::strlen(word);
  return static_cast<size_t>(end - start) == n && std::memcmp(start, word, n) == 0;
}

bool isSpace(char c) { return c == ' ' || c == '\t'; }

}  // namespace

bool HttpRequest::setMethod(const char* start, const char* end) {
  if (equals(start, end, "GET")) {
    method_ = kGet;
  } else if (equals(start, end, "POST")) {
    method_ = kPost;
  } else if (equals(start, end, "HEAD")) {
    method_ = kHead;
  } else if (equals(start, end, "PUT")) {
    method_ = kPut;
  } else if (equals(start, end, "DELETE")) {
    method_ = kDelete;
  } else {
    method_ = kInvalid;
  }
  return method_ != kInvalid;
}

const char* HttpRequest::methodString() const {
  switch (method_) {
    case kGet: return "GET";
    case kPost: return "POST";
    case kHead: return "HEAD";
    case kPut: return "PUT";
    case kDelete: return "DELETE";
    case kInvalid: break;
  }
  return "UNKNOWN";
}

void HttpRequest::addHeader(const char* start, const char* colon, const char* end) {
  const char* value = colon + 1;
  while (value < end && isSpace(*value)) ++value;
  while (end > value && isSpace(end[-1])) --end;
  addHeader(std::string_view(start, static_cast<size_t>(colon - start)),
            std::string_view(value, static_cast<size_t>(end - value)));
}

void HttpRequest::addHeader(std::string_view field, std::string_view value) {
  auto [it, inserted] = headers_.try_emplace(lowerCase(field));
  if (inserted || it->second.empty()) {
    it->second.assign(value.data(), value.size());
  } else if (!value.empty()) {
    // An empty value adds nothing: joined, it would leave a dangling ", ".
    it->second.append(", ");
    it->second.append(value.data(), value.size());
  }
}

std::string HttpRequest::getHeader(const std::string& field) const {
  const std::string* value = findHeader(lowerCase(field));
  return value ? *value : std::string();
}

const std::string* HttpRequest::findHeader(const std::string& lowerCaseField) const {
  auto it = headers_.find(lowerCaseField);
  return it == headers_.end() ? nullptr : &it->second;
}

void HttpRequest::clear() {
  method_ = kInvalid;
  version_ = kUnknown;
  path_.clear();
  query_.clear();
  receiveTime_ = Timestamp();
  headers_.clear();
  body_.clear();
}

void HttpRequest::swap(HttpRequest& that) noexcept {
  std::swap(method_, that.method_);
  std::swap(version_, that.version_);
  path_.swap(that.path_);
  query_.swap(that.query_);
  std::swap(receiveTime_, that.receiveTime_);
  headers_.swap(that.headers_);
  body_.swap(that.body_);
}

std::string HttpRequest::lowerCase(std::string_view field) {
  std::string result(field);
  for (char& c : result) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return result;
}

}  // namespace net
}  // namespace muon
