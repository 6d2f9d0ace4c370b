// muduo/base/Singleton.h for muduo programs built on muon: one T per
// process, made on first use (a function-local static, thread-safe since
// C++11) and destroyed at exit.
#pragma once

namespace muduo {

template <typename T>
class Singleton {
 public:
  Singleton() = delete;
  static T& instance() {
    static T value;
    return value;
  }
};

}  // namespace muduo
