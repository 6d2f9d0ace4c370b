// muduo/net/http/HttpResponse.h for muduo programs built on muon: muon's
// HttpResponse, with muduo's members (setStatusCode with muduo's k200Ok,
// k301MovedPermanently, k400BadRequest, k404NotFound and more,
// setStatusMessage, setContentType, addHeader, setBody, setCloseConnection,
// closeConnection, appendToBuffer).
#pragma once

#include <map>

#include "muduo/base/Types.h"
#include "muduo/base/copyable.h"
#include "muduo/net/Buffer.h"
#include "muon/net/http/HttpResponse.h"

namespace muduo {
namespace net {

using muon::net::HttpResponse;

}  // namespace net
}  // namespace muduo
