// muduo/base/Logging.h for muduo programs built on muon: the LOG_* macros
// are muon's (same names, same stream style); Logger::setLogLevel,
// setOutput and setFlush take the same arguments as muduo's.
#pragma once

#include "muduo/base/LogStream.h"
#include "muduo/base/Timestamp.h"
#include "muon/base/Logging.h"

namespace muduo {

using muon::Logger;
using muon::strerror_tl;

}  // namespace muduo
