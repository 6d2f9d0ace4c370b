// LogSite: what one LOG_* statement knows about itself: where it is (the
// trailer of its lines, made at compile time) and its level. Per-module levels
// (Logger::setModuleLevel, MUON_LOG_LEVEL) and the backtrace ring make a
// statement's level depend on its source file, so each statement caches its
// own in a static LogSite, and a disabled statement costs one relaxed load of
// that cache and a compare, as a single global level did.
//
// Every site is registered when the program (or the shared object holding
// it) is loaded, whether its statement ever runs or not: MUON_LOG_SITE makes
// it a variable template's instance (siteFor below) beside one whose dynamic
// initializer registers it (siteRegistered), which takes the configuration's
// mutex, works out the site's levels from the configuration (LoggerConfig.h)
// and links it into the registry. Every change of the levels re-resolves the
// registered sites under the same mutex. So a statement never resolves its
// site: admit() is its whole level check. A statement that runs during
// static initialization before its site's initializer has run (the order
// of those across a program is not defined) has the initial configuration's
// level, INFO. A site leaves the registry when its shared object is unloaded
// (SiteRegistration's destructor), but a record still queued holds its
// address: a shared object whose LOG_* statements ran must not be unloaded
// (dlclose) while an AsyncLogging may still format their lines.
//
// This is an internal header, included by Logging.h: include that.
#pragma once

#include <atomic>
#include <cstddef>

#include "muon/base/internal/LineLayout.h"

// Checks that a variable is initialized at compile time (C++20's constinit,
// which C++17 spells per compiler).
#if defined(__clang__)
#define MUON_CONSTINIT [[clang::require_constant_initialization]]
#elif defined(__GNUC__) && __GNUC__ >= 10
#define MUON_CONSTINIT __constinit
#else
#define MUON_CONSTINIT
#endif

namespace muon {
namespace detail {

struct LogSite {
  // A site's threshold before it is registered: the initial configuration's
  // level (Logger::INFO; LoggerConfig.cc checks).
  static constexpr int kInitialThreshold = 2;
  // Its level before it is registered: none, so that a line at any level
  // goes to the output.
  static constexpr int kNoLevel = -1;

  constexpr LogSite(const char* path, int line)
      : where(makeSourceLocation(path, line)), file(path) {}
  LogSite(const LogSite&) = delete;
  LogSite& operator=(const LogSite&) = delete;

  const SourceLocation where;

  // Lowest level this statement formats: its level, or TRACE while the
  // backtrace ring is on (lines below the level go to the ring).
  std::atomic<int> threshold{kInitialThreshold};
  // Lowest level this statement writes to the output.
  std::atomic<int> level{kNoLevel};
  // The statement's __FILE__, matched against module patterns.
  const char* const file;
  // The registry's list; guarded by its mutex.
  LogSite* prev = nullptr;
  LogSite* next = nullptr;
  bool registered = false;  // guarded by the registry's mutex
};

// A site's place in the registry, from the load of the program or shared
// object holding it to its unload (or the program's exit): made, it
// registers the site and resolves its levels; destroyed, it takes the site
// out (LoggerConfig.cc), so that a level change never touches a site whose
// shared object is gone.
class SiteRegistration {
 public:
  explicit SiteRegistration(LogSite& site);
  ~SiteRegistration();
  SiteRegistration(const SiteRegistration&) = delete;
  SiteRegistration& operator=(const SiteRegistration&) = delete;

 private:
  LogSite& site_;
};

// One statement's site, and its registration (MUON_LOG_SITE). Tag is a
// class local to the statement, whose static functions file() and line()
// name where it is: one site per statement, and per instance of a template
// holding it. The site is initialized at compile time (checked), so that it
// is whole before any registration's dynamic initializer runs.
template <class Tag>
MUON_CONSTINIT inline LogSite siteFor{Tag::file(), Tag::line()};
template <class Tag>
inline const SiteRegistration siteRegistered{siteFor<Tag>};

// The site if a statement at `level` is to be formatted, else nullptr.
inline LogSite* admit(LogSite& site, int level) {
  // A disabled statement returns at this compare, before its function sets
  // up anything (the compiler places the frame after it).
  if (site.threshold.load(std::memory_order_relaxed) > level) return nullptr;
  return &site;
}

}  // namespace detail
}  // namespace muon
