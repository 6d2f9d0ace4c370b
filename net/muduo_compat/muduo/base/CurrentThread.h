// muduo/base/CurrentThread.h for muduo programs built on muon: the calling
// thread's id (muon's cached gettid) and the name muduo::Thread gave it.
// Every function is about the calling thread; any thread may call them.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#include "muduo/base/Types.h"
#include "muon/base/CurrentThread.h"

namespace muduo {
namespace CurrentThread {

inline int tid() { return muon::CurrentThread::tid(); }
// "%5d " of tid(), NUL-terminated, as muduo's log line has it.
inline const char* tidString() { return muon::CurrentThread::tidString().data(); }
inline int tidStringLength() { return static_cast<int>(muon::CurrentThread::tidString().size()); }
inline bool isMainThread() { return muon::CurrentThread::isMainThread(); }

namespace detail {
// Set by muduo::Thread in the threads it starts.
inline thread_local const char* t_threadName = nullptr;
}  // namespace detail

// "main" in the main thread, the muduo::Thread's name in one of those,
// "unknown" elsewhere.
inline const char* name() {
  if (detail::t_threadName != nullptr) return detail::t_threadName;
  return isMainThread() ? "main" : "unknown";
}

inline void sleepUsec(int64_t usec) { std::this_thread::sleep_for(std::chrono::microseconds(usec)); }

}  // namespace CurrentThread
}  // namespace muduo
