// muduo/net/EventLoop.h for muduo programs built on muon: muon's EventLoop
// (loop, quit, runInLoop, queueInLoop, runAt/runAfter/runEvery/cancel,
// assertInLoopThread); its context is a std::any.
#pragma once

#include "muduo/base/CurrentThread.h"
#include "muduo/base/Mutex.h"
#include "muduo/base/Timestamp.h"
#include "muduo/net/Callbacks.h"
#include "muduo/net/TimerId.h"
#include "muon/net/EventLoop.h"

namespace muduo {
namespace net {

using muon::net::EventLoop;

}  // namespace net
}  // namespace muduo
