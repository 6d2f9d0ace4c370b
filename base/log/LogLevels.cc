// The level configuration behind LogSite: the default level, per-module
// levels, whether the backtrace ring wants lines below the level, and the
// registry of resolved sites that a change re-resolves.
#include <fnmatch.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "muon/base/Logging.h"

namespace muon {

namespace {

struct ModuleLevel {
  std::string pattern;
  Logger::LogLevel level;
};

struct LevelConfig {
  Logger::LogLevel defaultLevel = Logger::INFO;
  std::vector<ModuleLevel> modules;  // the last match wins
};

std::string trimmed(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return std::string();
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

bool parseSpec(const char* spec, LevelConfig* out, std::string* error) {
  LevelConfig config;
  bool sawDefault = false;
  const char* p = spec;
  for (;;) {
    const char* end = std::strchr(p, ',');
    const std::string entry = trimmed(end ? std::string(p, end) : std::string(p));
    const size_t eq = entry.find('=');
    Logger::LogLevel level = Logger::INFO;
    const std::string levelName = trimmed(eq == std::string::npos ? entry : entry.substr(eq + 1));
    if (!Logger::parseLogLevel(levelName.c_str(), &level)) {
      *error = "'" + levelName + "' is not a level";
      return false;
    }
    if (eq == std::string::npos) {
      if (sawDefault) {
        *error = "two default levels";
        return false;
      }
      sawDefault = true;
      config.defaultLevel = level;
    } else if (trimmed(entry.substr(0, eq)).empty()) {
      *error = "'" + entry + "' has no pattern";
      return false;
    } else {
      config.modules.push_back(ModuleLevel{trimmed(entry.substr(0, eq)), level});
    }
    if (end == nullptr) break;
    p = end + 1;
  }
  *out = std::move(config);
  return true;
}

constexpr const char* kSpecSyntax =
    "expected LEVEL or PATTERN=LEVEL, comma-separated, with LEVEL one of trace, debug, info, "
    "warn, error, fatal";

LevelConfig configFromEnvironment() {
  LevelConfig config;
  const char* env = std::getenv("MUON_LOG_LEVEL");
  std::string error;
  if (env && *env && !parseSpec(env, &config, &error)) {
    std::fprintf(stderr, "muon: ignoring MUON_LOG_LEVEL=%s: %s (%s); using info\n", env,
                 error.c_str(), kSpecSyntax);
    config = LevelConfig();
  }
  return config;
}

bool matches(const std::string& pattern, const char* file) {
  if (pattern.find('/') != std::string::npos) {
    // Against the path and each of its tails that starts after a '/'.
    for (const char* tail = file; tail != nullptr;) {
      if (::fnmatch(pattern.c_str(), tail, FNM_PATHNAME) == 0) return true;
      tail = std::strchr(tail, '/');
      if (tail != nullptr) ++tail;
    }
    return false;
  }
  const char* base = file + detail::basenameOffset(file);
  if (::fnmatch(pattern.c_str(), base, 0) == 0) return true;
  const char* dot = std::strrchr(base, '.');
  return dot != nullptr && ::fnmatch(pattern.c_str(), std::string(base, dot).c_str(), 0) == 0;
}

// Everything below is guarded by this mutex.
std::mutex g_mutex;
LevelConfig& config() {
  static LevelConfig c = configFromEnvironment();
  return c;
}
bool g_formatBelowLevel = false;  // the backtrace ring is on
detail::LogSite* g_sites = nullptr;

void resolve(detail::LogSite& site) {
  const LevelConfig& c = config();
  Logger::LogLevel level = c.defaultLevel;
  for (auto it = c.modules.rbegin(); it != c.modules.rend(); ++it) {
    if (matches(it->pattern, site.file)) {
      level = it->level;
      break;
    }
  }
  // level first: a statement that sees the new threshold sees its level.
  site.level.store(level, std::memory_order_relaxed);
  site.threshold.store(g_formatBelowLevel ? Logger::TRACE : level, std::memory_order_relaxed);
}

void resolveAll() {
  for (detail::LogSite* s = g_sites; s != nullptr; s = s->next) resolve(*s);
}

// fork() copies only the calling thread: a child that inherited g_mutex
// locked by another thread would hang at its first unresolved statement. So
// the fork waits for the mutex, and both sides release it.
void lockBeforeFork() { g_mutex.lock(); }
void unlockAfterFork() { g_mutex.unlock(); }
struct AtForkRegistration {
  AtForkRegistration() { ::pthread_atfork(&lockBeforeFork, &unlockAfterFork, &unlockAfterFork); }
};
AtForkRegistration g_atForkRegistration;

}  // namespace

namespace detail {

LogSite* resolveAndAdmit(LogSite& site, int level) {
  std::lock_guard<std::mutex> lock(g_mutex);
  // Unresolved under the mutex: not registered yet (another thread may have
  // done both since this one looked).
  if (site.threshold.load(std::memory_order_relaxed) == LogSite::kUnresolved) {
    site.next = g_sites;
    g_sites = &site;
  }
  resolve(site);
  return site.threshold.load(std::memory_order_relaxed) <= level ? &site : nullptr;
}

int initialDefaultLevel() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return config().defaultLevel;
}

void formatBelowLevel(bool on) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_formatBelowLevel = on;
  resolveAll();
}

}  // namespace detail

void Logger::setLogLevel(LogLevel level) {
  std::lock_guard<std::mutex> lock(g_mutex);
  config().defaultLevel = level;
  g_logLevel.store(level, std::memory_order_relaxed);
  resolveAll();
}

void Logger::setModuleLevel(const std::string& pattern, LogLevel level) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<ModuleLevel>& modules = config().modules;
  for (auto it = modules.begin(); it != modules.end(); ++it) {
    if (it->pattern == pattern) {
      modules.erase(it);
      break;
    }
  }
  modules.push_back(ModuleLevel{pattern, level});
  resolveAll();
}

void Logger::clearModuleLevels() {
  std::lock_guard<std::mutex> lock(g_mutex);
  config().modules.clear();
  resolveAll();
}

bool Logger::setLogLevels(const char* spec, std::string* error) {
  LevelConfig parsed;
  std::string why;
  if (!parseSpec(spec, &parsed, &why)) {
    if (error) *error = why + " (" + kSpecSyntax + ")";
    return false;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  config() = std::move(parsed);
  g_logLevel.store(config().defaultLevel, std::memory_order_relaxed);
  resolveAll();
  return true;
}

}  // namespace muon
