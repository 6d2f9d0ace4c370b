// muduo/net/InetAddress.h for muduo programs built on muon: muon's InetAddress
// (port / ip and port constructors, toIp, toIpPort, port, resolve).
#pragma once

#include "muduo/base/Types.h"
#include "muon/net/InetAddress.h"

namespace muduo {
namespace net {

using muon::net::InetAddress;

}  // namespace net
}  // namespace muduo
