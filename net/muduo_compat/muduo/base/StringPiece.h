// muduo/base/StringPiece.h for muduo programs built on muon: StringPiece is a
// std::string_view (so it goes wherever muon takes one) with the few members
// muduo's had that string_view lacks; StringArg is a C string taken from a
// const char* or a std::string.
#pragma once

#include <string>
#include <string_view>

namespace muduo {

class StringArg {
 public:
  StringArg(const char* str) : str_(str) {}                // NOLINT: implicit, as in muduo
  StringArg(const std::string& str) : str_(str.c_str()) {}  // NOLINT
  const char* c_str() const { return str_; }

 private:
  const char* str_;
};

class StringPiece : public std::string_view {
 public:
  StringPiece() = default;
  StringPiece(const char* str) : std::string_view(str) {}          // NOLINT: implicit, as in muduo
  StringPiece(const std::string& str) : std::string_view(str) {}   // NOLINT
  StringPiece(std::string_view view) : std::string_view(view) {}   // NOLINT
  StringPiece(const char* data, int len) : std::string_view(data, static_cast<size_t>(len)) {}
  StringPiece(const unsigned char* data, int len)
      : std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(len)) {}

  std::string as_string() const { return std::string(*this); }
  void CopyToString(std::string* target) const { target->assign(data(), size()); }
  void set(const char* data, int len) { *this = StringPiece(data, len); }
  void clear() { *this = StringPiece(); }
  bool starts_with(const StringPiece& x) const { return substr(0, x.size()) == x; }
};

}  // namespace muduo
