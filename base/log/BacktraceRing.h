// BacktraceRing: the lines behind Logger::enableBacktrace (glog's name for
// it; no stack is traced): the last n lines that were below their
// statement's level, kept so that the next ERROR or FATAL
// line can be preceded by what led up to it.
//
// Any thread may push and take; a mutex guards the ring. Only lines below
// the level pay for it, and only while the ring is on: they are formatted
// (not skipped) and copied into a slot.
//
// This is an internal header: use Logger::enableBacktrace.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace muon {
namespace detail {

// Keeps the last `lines` lines; 0 empties the ring and turns it off.
void backtraceResize(size_t lines);
// Copies one entry in, dropping the oldest if full. Logger keeps each line
// as a stored record (detail::storeRecord), so that a sink that takes
// records gets them when the ring is written.
void backtracePush(const char* line, size_t len);
// The kept entries, oldest first; the ring is left empty.
std::vector<std::string> backtraceTake();

// For fork(): a child must not inherit the ring's mutex locked by a thread
// that does not exist in it, so the fork waits for the mutex and both sides
// release it. Called only by the logger configuration's fork handler
// (LoggerConfig.cc), after it has taken its own mutex: Logger::
// enableBacktrace holds that one while it resizes the ring, so the two are
// always taken in that order.
void backtraceLockForFork();
void backtraceUnlockAfterFork();

}  // namespace detail
}  // namespace muon
