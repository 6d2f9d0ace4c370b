// muduo/base/Types.h for muduo programs built on muon (the muduo_compat
// bridge, see docs/book.md): muduo::string is std::string, and muduo's two
// casts.
#pragma once

#include <cstring>
#include <string>

namespace muduo {

using std::string;

inline void memZero(void* p, size_t n) { std::memset(p, 0, n); }

// An up-cast (or any implicit conversion) spelled out.
template <typename To, typename From>
inline To implicit_cast(const From& f) {
  return f;
}

// A down-cast the caller knows to be right (not checked).
template <typename To, typename From>
inline To down_cast(From* f) {
  return static_cast<To>(f);
}

}  // namespace muduo
