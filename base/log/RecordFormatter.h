// RecordFormatter: records (RecordQueue.h) back into the text lines their
// statements would have written, byte for byte: the same prefix, level
// name, operands through the same LogStream, and trailer as a statement
// that formats its own line (Logging.cc). The time is the one the statement
// read; the zone and the control-character policy are the ones in force
// when the record is formatted.
//
// Used by the thread that consumes the queues (AsyncLogging's backend); one
// formatter per such thread: not thread-safe.
#pragma once

#include <cstddef>

#include "muon/base/LineLayout.h"
#include "muon/base/RecordQueue.h"
#include "muon/base/TscClock.h"

namespace muon {
namespace detail {

class RecordFormatter {
 public:
  // The longest line format() writes.
  static constexpr size_t kMaxLine = LogStream::kBufferSize;

  // Writes the line of `record` into `out` (room for kMaxLine bytes) and
  // returns its length. `prefix` is the cache of the record's thread
  // (`tid`, "%5d "), whose records come to it in order.
  size_t format(const RecordHeader& record, LinePrefix& prefix, std::string_view tid, char* out);

 private:
  // The window on the second of the last counter reading converted.
  TscClock::SecondWindow window_;
};

}  // namespace detail
}  // namespace muon
