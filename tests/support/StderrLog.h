// Logger output for death tests, which match what the dying child wrote to
// stderr while the log goes to stdout by default. Call inside the death
// statement, so that only the child changes its output:
//   EXPECT_DEATH({ muon::test::logToStderr(); LOG_FATAL << "x"; }, "FATAL x");
// Each line is one write(2) (nothing waits in a stdio buffer when the child
// aborts), async-signal-safe as a crash handler's output must be.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>

#include "muon/base/Logging.h"

namespace muon {
namespace test {
namespace detail {

inline std::atomic<bool>& stderrLineWritten() {
  static std::atomic<bool> written{false};
  return written;
}

inline void writeStderr(const char* text, size_t len) {
  ssize_t n = ::write(STDERR_FILENO, text, len);
  (void)n;  // a death test sees a lost line as a failed match
}

inline void stderrOutput(const char* line, size_t len) {
  writeStderr(line, len);
  stderrLineWritten() = true;
}

inline void stderrFlushMark() {
  const char* mark = stderrLineWritten() ? "<flushed after the line>\n" : "<flushed before the line>\n";
  writeStderr(mark, std::strlen(mark));
}

}  // namespace detail

// Logger's lines go to stderr; its flush is left as it is.
inline void logToStderr() { Logger::setOutput(&detail::stderrOutput); }

// The same, and each flush writes "<flushed after the line>\n" once a line
// has been written ("<flushed before the line>\n" before), so a test checks
// that a fatal line is out before Logger flushes and aborts.
inline void logToStderrMarkingFlushes() {
  logToStderr();
  Logger::setFlush(&detail::stderrFlushMark);
}

}  // namespace test
}  // namespace muon
