// muduo/net/http/HttpContext.h for muduo programs built on muon: muon's
// HttpContext, with muduo's members (parseRequest, gotAll, reset, request)
// and its parse states (kExpectRequestLine ... kGotAll).
#pragma once

#include "muduo/base/Types.h"
#include "muduo/base/copyable.h"
#include "muduo/net/Buffer.h"
#include "muduo/net/http/HttpRequest.h"
#include "muon/net/http/HttpContext.h"

namespace muduo {
namespace net {

using muon::net::HttpContext;

}  // namespace net
}  // namespace muduo
