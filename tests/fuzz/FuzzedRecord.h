// The parts of a LogRecord other than its message and fields, from fuzzed
// bytes, for the targets that encode records: any time to year 9999, any
// level, thread id, function and file. *function and *file hold the bytes
// the record's views point to.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <string>

#include "muon/base/LogRecord.h"
#include "muon/base/internal/LineLayout.h"

inline void fuzzRecordParts(FuzzedDataProvider& in, muon::LogRecord* record, std::string* function,
                            std::string* file) {
  record->time = muon::Timestamp(in.ConsumeIntegralInRange<int64_t>(0, 253402300799999999));
  record->level = static_cast<muon::Logger::LogLevel>(
      in.ConsumeIntegralInRange(0, muon::detail::kLevelCount - 1));
  record->tid = in.ConsumeIntegralInRange(0, 999999999);
  *function = in.ConsumeRandomLengthString(16);
  *file = in.ConsumeRandomLengthString(16);
  record->function = *function;
  record->file = *file;
  record->line = 42;
}
