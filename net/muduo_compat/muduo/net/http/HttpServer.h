// muduo/net/http/HttpServer.h for muduo programs built on muon: muon's
// HttpServer, with muduo's constructor (loop, address, name, option),
// setHttpCallback, setThreadNum, start and getLoop. Link muon::http
// (muon::muduo_compat brings it).
#pragma once

#include "muduo/base/noncopyable.h"
#include "muduo/net/TcpServer.h"
#include "muon/net/http/HttpServer.h"

namespace muduo {
namespace net {

using muon::net::HttpServer;

}  // namespace net
}  // namespace muduo
