// CurrentThread: the calling thread's kernel thread id, cached per thread.
// Every function here is about the calling thread, so any thread may call them.
#pragma once

#include <string_view>

namespace muon {
namespace CurrentThread {

// gettid(), with one system call per thread (and per fork: the cache is
// reset in a forked child, whose thread has a new id).
//
// Out of line on purpose: inlining a read of an extern thread_local into
// callers made GCC 12 with -fsanitize=undefined test stale flags after the TLS
// address computation and report "member access within null pointer" (a
// false report, but it aborts sanitizer builds of every caller). The call
// costs about a nanosecond; the system call it saves costs far more.
int tid();

// tid() as the log line prints it: right-aligned in 5 columns, then a space.
// Valid until the thread exits (or forks).
std::string_view tidString();

bool isMainThread();

}  // namespace CurrentThread
}  // namespace muon
