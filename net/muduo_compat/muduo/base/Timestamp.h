// muduo/base/Timestamp.h for muduo programs built on muon: muon's Timestamp,
// which has muduo's members (now, toString, toFormattedString,
// microSecondsSinceEpoch, ...) and timeDifference / addTime.
#pragma once

#include "muduo/base/Types.h"
#include "muduo/base/copyable.h"
#include "muon/base/Timestamp.h"

namespace muduo {

using muon::Timestamp;
using muon::addTime;
using muon::timeDifference;

}  // namespace muduo
