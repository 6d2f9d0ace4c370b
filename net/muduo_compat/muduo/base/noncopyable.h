// muduo/base/noncopyable.h for muduo programs built on muon: a base class
// that deletes copying (muon itself writes `= delete` in each class).
#pragma once

namespace muduo {

class noncopyable {
 public:
  noncopyable(const noncopyable&) = delete;
  noncopyable& operator=(const noncopyable&) = delete;

 protected:
  noncopyable() = default;
  ~noncopyable() = default;
};

}  // namespace muduo
