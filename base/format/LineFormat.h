// LineFormat: what an output writes, chosen once, when the output is made
// (LogFile::Options::format, StdoutSink, AsyncLogging's and SyncLogging's
// files, muon-logcat's flags). Each format is one encoder of the line's
// parts (LogRecord.h; encode/LineEncoders.h):
//
//   kText    muon's line, muduo's layout (LineLayout.h):
//            20261121 08:15:02.123456Z  4321 INFO  login user=alice - auth.cc:42
//   kJson    one JSON object a line, Elastic Common Schema names (JsonLines.h)
//   kLogfmt  one logfmt line, the keys Heroku, Loki and hl read:
//            time=2026-11-21T08:15:02.123456Z level=INFO thread=4321 msg=login
//            file=auth.cc line=42 user=alice                       (one line)
#pragma once

namespace muon {

enum class LineFormat { kText, kJson, kLogfmt };

}  // namespace muon
