#include "muon/base/LineLayout.h"

#include <cstring>

#include "muon/base/LogRecord.h"
#include "muon/base/TimeZone.h"

namespace muon {
namespace detail {

size_t writePrefix(char* p, const DateTime& dt, bool utc, std::string_view tid) {
  char* const start = p;
  // Years 0..9999 print as 4 digits; anything else is out of a log's range.
  const int year = dt.year < 0 ? 0 : (dt.year > 9999 ? 9999 : dt.year);
  auto write2 = [](char* at, int v) { writeTwoDigits(at, static_cast<unsigned>(v)); };
  write2(p, year / 100);
  write2(p + 2, year % 100);
  write2(p + 4, dt.month);
  write2(p + 6, dt.day);
  p[8] = ' ';
  write2(p + 9, dt.hour);
  p[11] = ':';
  write2(p + 12, dt.minute);
  p[14] = ':';
  write2(p + 15, dt.second);
  p[17] = '.';
  p += kMicroOffset + 6;  // the digits are written per line
  if (utc) *p++ = 'Z';
  *p++ = ' ';
  std::memcpy(p, tid.data(), tid.size());
  p += tid.size();
  return static_cast<size_t>(p - start);
}

void appendFromLevel(std::string* out, const LogRecord& record) {
  out->append(kLevelNames[record.level], kLevelNameLength);
  if (!record.function.empty()) {
    out->append(record.function);
    *out += ' ';
  }
  out->append(record.message);
  if (!record.file.empty()) {
    const SourceLocation where = makeTrailer(record.file.data(), record.file.size(), record.line);
    out->append(where.trailer, where.length - 1);  // without the '\n'
  }
}

}  // namespace detail
}  // namespace muon
