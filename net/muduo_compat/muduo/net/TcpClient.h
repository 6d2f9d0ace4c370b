// muduo/net/TcpClient.h for muduo programs built on muon: muon's TcpClient;
// brings in TcpConnection.h, as TcpServer.h does.
#pragma once

#include "muduo/base/Mutex.h"
#include "muduo/base/Types.h"
#include "muduo/net/EventLoop.h"
#include "muduo/net/TcpConnection.h"
#include "muon/net/TcpClient.h"

namespace muduo {
namespace net {

using muon::net::TcpClient;

}  // namespace net
}  // namespace muduo
