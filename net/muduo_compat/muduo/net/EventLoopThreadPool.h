// muduo/net/EventLoopThreadPool.h for muduo programs built on muon: muon's
// EventLoopThreadPool (setThreadNum, start, getNextLoop, getLoopForHash,
// getAllLoops).
#pragma once

#include "muduo/base/Types.h"
#include "muduo/base/noncopyable.h"
#include "muon/net/EventLoopThreadPool.h"

namespace muduo {
namespace net {

using muon::net::EventLoopThreadPool;

}  // namespace net
}  // namespace muduo
