// muduo/net/Channel.h for muduo programs built on muon: muon's Channel, the
// interest set and callbacks of one fd in one loop.
#pragma once

#include "muduo/base/Timestamp.h"
#include "muon/net/Channel.h"

namespace muduo {
namespace net {

using muon::net::Channel;

}  // namespace net
}  // namespace muduo
