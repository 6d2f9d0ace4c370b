// MadeRecords: a statement's records as AsyncLogging's queue holds them,
// for timing or counting the backend's formatter (RecordFormatter) alone,
// with no queue and no thread. Each record's operands are stored by the
// statement's own recorder (Statement.h's Recorder, the chain of << a
// LOG_INFO runs), its time the counter where it is the clock, the records a
// few microseconds apart as a busy thread's are.
#pragma once

#include <cstdint>
#include <cstdlib>
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

  // `count` records; record r holds what operands(recorder, r) records: a
  // chain of << on the Recorder it is given, which it returns (at most
  // kSlot bytes with the header; only operands a record stores, none that
  // make the statement a Logger).
  template <typename Operands>
  MadeRecords(size_t count, Operands operands) : count_(count), bytes_(new char[count * kSlot]) {
    // Past TscClock's warm-up, where the counter is available (it comes then).
    while (muon::TscClock::counterAvailable() && !muon::TscClock::countsAreTime()) {
      muon::TscClock::now();
    }
    static muon::detail::LogSite site{__FILE__, __LINE__};
    const bool counter = muon::TscClock::countsAreTime();
    uint64_t at = muon::TscClock::readCounter();
    constexpr size_t kHeader = sizeof(muon::detail::RecordHeader);
    alignas(16) char scratch[kHeader + 2 * muon::detail::kRecorderRoom];
    using Recorder = muon::detail::Recorder<muon::detail::kRecorderRoom, muon::Logger::INFO>;
    for (size_t r = 0; r < count; ++r) {
      const Recorder begun{scratch, kHeader, sizeof scratch - 8, &muon::detail::g_noLane};
      const auto ended = operands(begun, r);
      if (ended.start != scratch || ended.used > kSlot) std::abort();  // larger than a slot
      muon::detail::RecordHeader header{};
      header.length = static_cast<uint16_t>(ended.used - kHeader);
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
      std::memcpy(p + sizeof header, scratch + kHeader, header.length);
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
