// muduo/base/LogStream.h for muduo programs built on muon: LogStream and
// Fmt are muon's.
#pragma once

#include "muduo/base/StringPiece.h"
#include "muduo/base/Types.h"
#include "muduo/base/noncopyable.h"
#include "muon/base/LogStream.h"

namespace muduo {

using muon::Fmt;
using muon::LogStream;

}  // namespace muduo
