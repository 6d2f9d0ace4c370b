// muduo/net/EventLoopThread.h for muduo programs built on muon: muon's
// EventLoopThread (startLoop returns the new thread's loop).
#pragma once

#include "muduo/base/Condition.h"
#include "muduo/base/Thread.h"
#include "muduo/base/Types.h"
#include "muon/net/EventLoopThread.h"

namespace muduo {
namespace net {

using muon::net::EventLoopThread;

}  // namespace net
}  // namespace muduo
