// The backtrace ring behind Logger::enableBacktrace: the last n lines that
// were below their statement's level, kept so that the next ERROR or FATAL
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
// Copies one whole line (ending in '\n') in, dropping the oldest if full.
void backtracePush(const char* line, size_t len);
// The kept lines, oldest first; the ring is left empty.
std::vector<std::string> backtraceTake();

}  // namespace detail
}  // namespace muon
