// muduo/base/LogFile.h for muduo programs built on muon: muon's LogFile
// (basename, roll size, thread-safe, flush interval, check every N).
#pragma once

#include "muduo/base/Types.h"
#include "muon/base/LogFile.h"

namespace muduo {

using muon::LogFile;

}  // namespace muduo
