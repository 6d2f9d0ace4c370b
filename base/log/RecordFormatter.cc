#include "muon/base/RecordFormatter.h"

#include <algorithm>
#include <cstring>

#include "muon/base/LogOperands.h"
#include "muon/base/LogSite.h"

namespace muon {
namespace detail {

size_t RecordFormatter::format(const RecordHeader& record, LinePrefix& prefix,
                               std::string_view tid, char* out) {
  const char* body = reinterpret_cast<const char*>(&record + 1);
  if (record.kind == RecordHeader::kText) {
    const size_t n = std::min<size_t>(record.length, kMaxLine);
    std::memcpy(out, body, n);
    return n;
  }
  int64_t second;
  int micro;
  if (record.kind == RecordHeader::kStatementCount) {
    const auto count = static_cast<uint64_t>(record.time);
    if (!window_.covers(count)) {
      const Timestamp t = TscClock::atCount(count, &window_);
      second = t.secondsSinceEpoch();
      micro = t.microSecondsInSecond();
    } else {
      second = window_.second;
      micro = window_.microAt(count);
    }
  } else {
    const Timestamp t(record.time);
    second = t.secondsSinceEpoch();
    micro = t.microSecondsInSecond();
  }
  prefix.update(second, timeZoneGeneration(), tid);
  const int level = record.level < kLevelCount ? record.level : kLevelCount - 1;

  // The line is made in place, in `out`.
  LogStream stream;
  LogStream::Buffer& buf = stream.buffer();
  buf.redirect(out, kMaxLine);
  writeHeader(buf, prefix, micro, level);
  replayOperands(body, record.length, stream);
  stream.closeFields();
  appendTrailer(buf, record.site->where);
  return buf.length();
}

size_t formatRecordedLine(const char* p, size_t n, char* out) {
  if (n < kRecordedLineHeader) return 0;
  const size_t head = static_cast<unsigned char>(p[0]);
  const size_t trailer = static_cast<unsigned char>(p[1]);
  if (head > kMaxRecordedHead || trailer == 0 || trailer > SourceLocation::kCapacity ||
      kRecordedLineHeader + head + trailer > n || p[n - 1] != '\n') {
    return 0;
  }
  const char* operands = p + kRecordedLineHeader + head;
  const size_t operandBytes = n - kRecordedLineHeader - head - trailer;
  LogStream stream;
  LogStream::Buffer& buf = stream.buffer();
  buf.redirect(out, RecordFormatter::kMaxLine);
  buf.append(p + kRecordedLineHeader, head);
  if (!replayOperands(operands, operandBytes, stream)) return 0;
  stream.closeFields();
  appendTrailerBytes(buf, operands + operandBytes, trailer);
  return buf.length();
}

}  // namespace detail
}  // namespace muon
