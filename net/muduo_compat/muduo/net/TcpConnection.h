// muduo/net/TcpConnection.h for muduo programs built on muon: muon's
// TcpConnection. Its context is a std::any: boost::any_cast on
// getContext() becomes std::any_cast (docs/book.md).
#pragma once

#include "muduo/base/StringPiece.h"
#include "muduo/base/Types.h"
#include "muduo/base/noncopyable.h"
#include "muduo/net/Buffer.h"
#include "muduo/net/Callbacks.h"
#include "muduo/net/InetAddress.h"
#include "muon/net/TcpConnection.h"

namespace muduo {
namespace net {

using muon::net::TcpConnection;

}  // namespace net
}  // namespace muduo
