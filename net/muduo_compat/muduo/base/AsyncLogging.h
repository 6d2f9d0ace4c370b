// muduo/base/AsyncLogging.h for muduo programs built on muon: muon's
// AsyncLogging (basename, roll size, flush interval; start, append, stop).
#pragma once

#include "muduo/base/Types.h"
#include "muon/base/AsyncLogging.h"

namespace muduo {

using muon::AsyncLogging;

}  // namespace muduo
