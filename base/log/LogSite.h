// LogSite: what one LOG_* statement knows about itself: where it is (the
// trailer of its lines, made at compile time) and its level. Per-module levels
// (Logger::setModuleLevel, MUON_LOG_LEVEL) and the backtrace ring make a
// statement's level depend on its source file, so each statement caches its
// own in a static LogSite, and a disabled statement costs one relaxed load of
// that cache and a compare, as a single global level did.
//
// A site starts unresolved. Its first execution takes the configuration's
// mutex, works out its levels from the configuration (LoggerConfig.h) and
// links the site into the registry; every change of the levels re-resolves
// the registered sites under the same mutex. Sites live in static storage
// for the life of the program: a shared object holding LOG_* statements must
// not be unloaded (dlclose) while muon may change levels.
//
// This is an internal header, included by Logging.h: include that.
#pragma once

#include <atomic>
#include <cstddef>

#include "muon/base/internal/LineLayout.h"

namespace muon {
namespace detail {

struct LogSite {
  static constexpr int kUnresolved = -1;

  constexpr LogSite(const char* path, int line)
      : where(makeSourceLocation(path, line)), file(path) {}
  LogSite(const LogSite&) = delete;
  LogSite& operator=(const LogSite&) = delete;

  const SourceLocation where;

  // Lowest level this statement formats: its level, or TRACE while the
  // backtrace ring is on (lines below the level go to the ring).
  std::atomic<int> threshold{kUnresolved};
  // Lowest level this statement writes to the output.
  std::atomic<int> level{kUnresolved};
  // The statement's __FILE__, matched against module patterns.
  const char* const file;
  LogSite* next = nullptr;  // the registry's list; guarded by its mutex
};

// Out of line (LoggerConfig.cc): registers and resolves `site`, then admits.
LogSite* resolveAndAdmit(LogSite& site, int level);

// The site if a statement at `level` is to be formatted, else nullptr.
inline LogSite* admit(LogSite& site, int level) {
  const int threshold = site.threshold.load(std::memory_order_relaxed);
  // A disabled statement returns at the first compare, before its function
  // sets up anything (the compiler places the frame after it).
  if (threshold > level) return nullptr;
  if (__builtin_expect(threshold < 0, 0)) return resolveAndAdmit(site, level);
  return &site;
}

}  // namespace detail
}  // namespace muon
