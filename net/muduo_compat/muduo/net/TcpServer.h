// muduo/net/TcpServer.h for muduo programs built on muon: muon's TcpServer.
// Brings in TcpConnection.h, so a server's callbacks can use the
// connection without another include.
#pragma once

#include <map>

#include "muduo/base/Atomic.h"
#include "muduo/base/Types.h"
#include "muduo/net/EventLoop.h"
#include "muduo/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

namespace muduo {
namespace net {

using muon::net::TcpServer;

}  // namespace net
}  // namespace muduo
