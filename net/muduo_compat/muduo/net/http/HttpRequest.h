// muduo/net/http/HttpRequest.h for muduo programs built on muon: muon's
// HttpRequest, with muduo's members (method, methodString, path, query,
// getVersion, getHeader, headers, receiveTime, swap). Field names in
// headers() are in lower case; getHeader() takes any case (docs/book.md).
#pragma once

#include <map>

#include "muduo/base/Timestamp.h"
#include "muduo/base/Types.h"
#include "muduo/base/copyable.h"
#include "muon/net/http/HttpRequest.h"

namespace muduo {
namespace net {

using muon::net::HttpRequest;

}  // namespace net
}  // namespace muduo
