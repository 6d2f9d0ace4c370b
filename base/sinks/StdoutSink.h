// StdoutSink: the console as a sink, for Logger::addSink beside a file.
//
//   muon::AsyncLogging file("/var/log/app/server", 500 * 1000 * 1000);
//   muon::StdoutSink console;
//   auto toFile = muon::Logger::addSink(file);
//   auto toConsole = muon::Logger::addSink(console, {muon::Logger::WARN});
//
// Each line goes to stdout's descriptor with one write(2), as Logger's
// default output does (Logging.cc): nothing waits in stdio's buffer, a line
// stays whole among other writers of the same pipe, and what the program
// printed with printf is pushed out first. A line that cannot be written
// (EPIPE, ENOSPC) is dropped. flush() pushes out stdio's buffer.
// StdoutSink console(muon::LineFormat::kJson) writes JSON lines instead
// (JsonLines.h), and LineFormat::kLogfmt logfmt lines (LineFormat.h), for a
// container runtime that ships stdout to a log store.
//
// Thread safety: append() and flush() from any thread. Its one setting is
// fixed at construction: any number of them may exist.
#pragma once

#include <cstddef>

#include "muon/base/LineFormat.h"

namespace muon {
namespace detail {
struct LineEncoder;
}  // namespace detail

class StdoutSink {
 public:
  explicit StdoutSink(LineFormat format = LineFormat::kText);
  void append(const char* line, size_t len);
  void flush();
  // What it writes; a sink of another format than text takes records from
  // Logger, which encodes them (LineEncoders.h).
  LineFormat lineFormat() const { return format_; }

 private:
  const LineFormat format_;
  const detail::LineEncoder& encoder_;
};

}  // namespace muon
