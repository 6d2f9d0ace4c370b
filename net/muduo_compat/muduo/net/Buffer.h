// muduo/net/Buffer.h for muduo programs built on muon: muon's Buffer, with muduo's
// members (peek, findCRLF, retrieve*, append, appendInt32, peekInt32,
// readInt32, prependInt32, readFd, ...); toStringPiece() is toStringView().
#pragma once

#include "muduo/base/StringPiece.h"
#include "muduo/base/Types.h"
#include "muduo/base/copyable.h"
#include "muduo/net/Endian.h"
#include "muon/net/Buffer.h"

namespace muduo {
namespace net {

using muon::net::Buffer;

}  // namespace net
}  // namespace muduo
