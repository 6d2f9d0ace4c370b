// LogSite: what one LOG_* statement knows about itself. Per-module levels
// (Logger::setModuleLevel, MUON_LOG_LEVEL) and the backtrace ring make a
// statement's level depend on its source file, so each statement caches its
// own in a static LogSite, and a disabled statement costs one relaxed load of
// that cache and a compare, as a single global level did.
//
// A site starts unresolved. Its first execution takes the registry mutex,
// works out its levels from the configuration (LogLevels.cc) and links the
// site into the registry; every change of the configuration re-resolves the
// registered sites under the same mutex. Sites live in static storage for the
// life of the program: a shared object holding LOG_* statements must not be
// unloaded (dlclose) while muon may change levels.
//
// This is an internal header, included by Logging.h: include that.
#pragma once

#include <atomic>

namespace muon {
namespace detail {

struct LogSite {
  static constexpr int kUnresolved = -1;

  // Lowest level this statement formats: its level, or TRACE while the
  // backtrace ring is on (lines below the level go to the ring).
  std::atomic<int> threshold{kUnresolved};
  // Lowest level this statement writes to the output.
  std::atomic<int> level{kUnresolved};
  // The statement's __FILE__, set when it is first resolved.
  const char* file = nullptr;
  LogSite* next = nullptr;  // the registry's list; guarded by its mutex
};

// Out of line (LogLevels.cc): registers and resolves `site`, then admits.
LogSite* resolveAndAdmit(LogSite& site, int level, const char* file);
// The default level MUON_LOG_LEVEL asks for (read once), for Logger::logLevel().
int initialDefaultLevel();
// Whether sites format lines below their level (the backtrace ring is on);
// re-resolves every registered site.
void formatBelowLevel(bool on);

// The site if a statement at `level` is to be formatted, else nullptr.
inline LogSite* admit(LogSite& site, int level, const char* file) {
  const int threshold = site.threshold.load(std::memory_order_relaxed);
  if (threshold > level) return nullptr;
  if (__builtin_expect(threshold < 0, 0)) return resolveAndAdmit(site, level, file);
  return &site;
}

}  // namespace detail
}  // namespace muon
