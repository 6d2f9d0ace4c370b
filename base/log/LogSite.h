// LogSite: what one LOG_* statement knows about itself: where it is (the
// trailer of its lines, made at compile time) and its level. Per-module levels
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
#include <cstddef>

namespace muon {
namespace detail {

// Offset of the basename in a path: "a/b/c.cc" -> 4. constexpr, so the
// macros can compute it at compile time.
constexpr size_t basenameOffset(const char* path) {
  size_t offset = 0;
  for (size_t i = 0; path[i] != '\0'; ++i) {
    if (path[i] == '/') offset = i + 1;
  }
  return offset;
}

// What a line ends with, " - file.cc:42\n", built at compile time once per
// LOG_* statement (inside its LogSite), so a line only copies it.
struct SourceLocation {
  static constexpr size_t kCapacity = 96;
  char trailer[kCapacity];
  size_t length;
};

constexpr SourceLocation makeSourceLocation(const char* path, int line) {
  SourceLocation where{};
  size_t n = 0;
  where.trailer[n++] = ' ';
  where.trailer[n++] = '-';
  where.trailer[n++] = ' ';
  // Room is kept for ':', ten digits and '\n'; a longer name is cut.
  const char* base = path + basenameOffset(path);
  for (size_t i = 0; base[i] != '\0' && n < SourceLocation::kCapacity - 12; ++i) {
    where.trailer[n++] = base[i];
  }
  where.trailer[n++] = ':';
  char digits[10] = {};
  size_t count = 0;
  unsigned v = line > 0 ? static_cast<unsigned>(line) : 0u;
  do {
    digits[count++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (count > 0) where.trailer[n++] = digits[--count];
  where.trailer[n++] = '\n';
  where.length = n;
  return where;
}

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

// Out of line (LogLevels.cc): registers and resolves `site`, then admits.
LogSite* resolveAndAdmit(LogSite& site, int level);
// The default level MUON_LOG_LEVEL asks for (read once), for Logger::logLevel().
int initialDefaultLevel();
// Whether sites format lines below their level (the backtrace ring is on);
// re-resolves every registered site.
void formatBelowLevel(bool on);

// The site if a statement at `level` is to be formatted, else nullptr.
inline LogSite* admit(LogSite& site, int level) {
  const int threshold = site.threshold.load(std::memory_order_relaxed);
  if (threshold > level) return nullptr;
  if (__builtin_expect(threshold < 0, 0)) return resolveAndAdmit(site, level);
  return &site;
}

}  // namespace detail
}  // namespace muon
