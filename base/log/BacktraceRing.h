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

}  // namespace detail
}  // namespace muon
