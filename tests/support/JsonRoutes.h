// The JSON encoder's two routes for one deferred record (RecordFormatter.h),
// for the tests and the fuzz target that compare them: straight from the
// recorded operands (encodeJsonOfOperands) and through the text line.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "muon/base/LogStream.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LogSite.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/internal/RecordQueue.h"

namespace muon {
namespace test {

// What a recording LogStream wrote, as AsyncLogging's queue holds it: the
// header (at `level`, `micros` since the epoch, of `site`) and the operands.
class RecordedStatement {
 public:
  RecordedStatement(const LogStream& recording, int level, int64_t micros,
                    const detail::LogSite* site) {
    detail::RecordHeader header{};
    header.length = static_cast<uint16_t>(recording.buffer().length());
    header.size = static_cast<uint32_t>(detail::recordSize(header.length));
    header.kind = detail::RecordHeader::kStatementMicros;
    header.level = static_cast<uint8_t>(level);
    header.time = micros;
    header.site = site;
    bytes_.resize(header.size);
    std::memcpy(bytes_.data(), &header, sizeof header);
    std::memcpy(bytes_.data() + sizeof header, recording.buffer().data(), header.length);
  }
  const detail::RecordHeader& header() const {
    return *reinterpret_cast<const detail::RecordHeader*>(bytes_.data());
  }

 private:
  std::vector<char> bytes_;
};

struct JsonRoutes {
  std::string direct;  // what RecordFormatter writes with no tap
  std::string text;    // what it writes with one: always through the text line
  size_t written;      // what encodeJsonOfOperands wrote (0: it declined)
};

inline JsonRoutes jsonRoutes(const RecordedStatement& statement) {
  struct NoTap : detail::LineTap {
    void take(const LogRecord&) override {}
  };
  const detail::RecordHeader& r = statement.header();
  detail::RecordFormatter formatter(LineFormat::kJson);
  std::vector<char> out(formatter.maxLine());
  detail::LinePrefix prefix;
  JsonRoutes routes;
  routes.direct.assign(out.data(), formatter.format(r, prefix, 4321, " 4321 ", out.data()));
  NoTap tap;
  routes.text.assign(out.data(), formatter.format(r, prefix, 4321, " 4321 ", out.data(), &tap));
  detail::OperandLine line{};
  line.second = r.time / 1000000;
  line.micro = static_cast<int>(r.time % 1000000);
  line.level = r.level;
  line.tid = 4321;
  line.where = &r.site->where;
  line.operands = reinterpret_cast<const char*>(&r + 1);
  line.length = r.length;
  routes.written = detail::encodeJsonOfOperands(line, out.data());
  return routes;
}

}  // namespace test
}  // namespace muon
