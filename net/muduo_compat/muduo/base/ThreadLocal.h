// muduo/base/ThreadLocal.h for muduo programs built on muon: each object
// holds one T per thread that calls value(), destroyed when that thread
// exits or with the object, whichever comes first.
#pragma once

#include <pthread.h>

#include <cassert>

#include "muduo/base/noncopyable.h"

namespace muduo {

template <typename T>
class ThreadLocal : noncopyable {
 public:
  ThreadLocal() {
    const int err = ::pthread_key_create(&key_, &ThreadLocal::destructor);
    assert(err == 0);
    (void)err;
  }
  // Destroys the calling thread's T; other threads' are not reached (as in
  // muduo): destroy a ThreadLocal only after the threads using it are done.
  ~ThreadLocal() {
    destructor(::pthread_getspecific(key_));
    ::pthread_key_delete(key_);
  }

  T& value() {
    T* perThread = static_cast<T*>(::pthread_getspecific(key_));
    if (perThread == nullptr) {
      perThread = new T();
      ::pthread_setspecific(key_, perThread);
    }
    return *perThread;
  }

 private:
  static void destructor(void* x) { delete static_cast<T*>(x); }

  pthread_key_t key_;
};

}  // namespace muduo
