// muduo/net/TimerId.h for muduo programs built on muon: muon's TimerId, a value naming one timer.
#pragma once

#include "muon/net/TimerId.h"

namespace muduo {
namespace net {

using muon::net::TimerId;

}  // namespace net
}  // namespace muduo
