// muduo/base/ThreadLocalSingleton.h for muduo programs built on muon: one T
// per thread, made on the thread's first instance() and destroyed when the
// thread exits. pointer() is null before instance() in that thread.
#pragma once

#include <memory>

namespace muduo {

template <typename T>
class ThreadLocalSingleton {
 public:
  ThreadLocalSingleton() = delete;
  static T& instance() {
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }
  static T* pointer() { return value_.get(); }

 private:
  static inline thread_local std::unique_ptr<T> value_;
};

}  // namespace muduo
