// MadeRecords: a statement's records as AsyncLogging's queue holds them,
// for timing or counting the backend's formatter (RecordFormatter) alone,
// with no queue and no thread. Each record is made as a statement attached
// to AsyncLogging records its operands (a recording LogStream), its time the
// counter where it is the clock, the records a few microseconds apart as a
// busy thread's are.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "muon/base/internal/LogSite.h"
#include "muon/base/LogStream.h"
#include "muon/base/Logging.h"
#include "muon/base/internal/RecordQueue.h"
#include "muon/base/Timestamp.h"
#include "muon/base/TscClock.h"

namespace logbench {

class MadeRecords {
 public:
  static constexpr size_t kSlot = 512;  // bytes per record, its header included

  // `count` records; record r holds what operands(stream, r) streams into a
  // LogStream (at most kSlot bytes with the header).
  template <typename Operands>
  MadeRecords(size_t count, Operands operands) : count_(count), bytes_(new char[count * kSlot]) {
    // Past TscClock's warm-up, where the counter is available (it comes then).
    while (muon::TscClock::counterAvailable() && !muon::TscClock::countsAreTime()) {
      muon::TscClock::now();
    }
    static muon::detail::LogSite site{__FILE__, __LINE__};
    const bool counter = muon::TscClock::countsAreTime();
    uint64_t at = muon::TscClock::readCounter();
    for (size_t r = 0; r < count; ++r) {
      muon::LogStream stream;
      stream.startRecording([](void*, muon::LogStream&) {}, nullptr);
      operands(stream, r);
      muon::detail::RecordHeader header{};
      header.length = static_cast<uint16_t>(stream.buffer().length());
      header.size = static_cast<uint32_t>(muon::detail::recordSize(header.length));
      header.kind = counter ? muon::detail::RecordHeader::kStatementCount
                            : muon::detail::RecordHeader::kStatementMicros;
      header.level = muon::Logger::INFO;
      at += 10000;
      header.key = at;
      header.time = counter ? static_cast<int64_t>(at) : muon::Timestamp::now().microSecondsSinceEpoch();
      header.site = &site;
      char* p = bytes_.get() + r * kSlot;
      std::memcpy(p, &header, sizeof header);
      std::memcpy(p + sizeof header, stream.buffer().data(), header.length);
    }
  }

  size_t size() const { return count_; }
  const muon::detail::RecordHeader& operator[](size_t r) const {
    return *reinterpret_cast<const muon::detail::RecordHeader*>(bytes_.get() + r * kSlot);
  }

 private:
  size_t count_;
  std::unique_ptr<char[]> bytes_;
};

}  // namespace logbench
