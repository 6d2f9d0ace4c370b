// The levels of the logger configuration: level names, MUON_LOG_LEVEL's
// syntax, module patterns and their matching, and Logger's level setters
// (each a change of the configuration, LoggerConfig.h).
#include <fnmatch.h>
#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "muon/base/Logging.h"
#include "muon/base/internal/LoggerConfig.h"

namespace muon {

namespace {

using detail::ModuleLevel;
using detail::ModuleLevels;

// What a MUON_LOG_LEVEL spec sets.
struct Levels {
  Logger::LogLevel defaultLevel = Logger::INFO;
  ModuleLevels modules;  // the last match wins
};

std::string trimmed(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return std::string();
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

bool parseSpec(const char* spec, Levels* out, std::string* error) {
  Levels levels;
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
      levels.defaultLevel = level;
    } else if (trimmed(entry.substr(0, eq)).empty()) {
      *error = "'" + entry + "' has no pattern";
      return false;
    } else {
      levels.modules.push_back(ModuleLevel{trimmed(entry.substr(0, eq)), level});
    }
    if (end == nullptr) break;
    p = end + 1;
  }
  *out = std::move(levels);
  return true;
}

constexpr const char* kSpecSyntax =
    "expected LEVEL or PATTERN=LEVEL, comma-separated, with LEVEL one of trace, debug, info, "
    "warn, error, fatal";

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

}  // namespace

namespace detail {

Logger::LogLevel levelFor(const LoggerConfig& config, const char* file) {
  if (config.modules != nullptr) {
    for (auto it = config.modules->rbegin(); it != config.modules->rend(); ++it) {
      if (matches(it->pattern, file)) return it->level;
    }
  }
  return config.defaultLevel;
}

void levelsFromEnvironment(LoggerConfig* config) {
  Levels levels;
  const char* env = std::getenv("MUON_LOG_LEVEL");
  std::string error;
  if (env && *env && !parseSpec(env, &levels, &error)) {
    std::fprintf(stderr, "muon: ignoring MUON_LOG_LEVEL=%s: %s (%s); using info\n", env,
                 error.c_str(), kSpecSyntax);
    levels = Levels();
  }
  config->defaultLevel = levels.defaultLevel;
  config->modules = keepModules(std::move(levels.modules));
}

}  // namespace detail

bool Logger::parseLogLevel(const char* name, LogLevel* level) {
  const size_t length = std::strlen(name);
  for (int i = 0; i < NUM_LOG_LEVELS; ++i) {
    const std::string_view known = detail::levelName(i);
    if (known.size() == length && ::strncasecmp(name, known.data(), length) == 0) {
      *level = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

Logger::LogLevel Logger::logLevel() { return detail::loggerConfig().defaultLevel; }

void Logger::setLogLevel(LogLevel level) {
  detail::changeLoggerConfig([&](detail::LoggerConfig& c) { c.defaultLevel = level; });
}

void Logger::setModuleLevel(const std::string& pattern, LogLevel level) {
  detail::changeLoggerConfig([&](detail::LoggerConfig& c) {
    ModuleLevels modules;
    if (c.modules != nullptr) {
      for (const ModuleLevel& m : *c.modules) {
        if (m.pattern != pattern) modules.push_back(m);
      }
    }
    modules.push_back(ModuleLevel{pattern, level});
    c.modules = detail::keepModules(std::move(modules));
  });
}

void Logger::clearModuleLevels() {
  detail::changeLoggerConfig([](detail::LoggerConfig& c) { c.modules = nullptr; });
}

bool Logger::setLogLevels(const char* spec, std::string* error) {
  Levels parsed;
  std::string why;
  if (!parseSpec(spec, &parsed, &why)) {
    if (error) *error = why + " (" + kSpecSyntax + ")";
    return false;
  }
  detail::changeLoggerConfig([&](detail::LoggerConfig& c) {
    c.defaultLevel = parsed.defaultLevel;
    c.modules = detail::keepModules(std::move(parsed.modules));
  });
  return true;
}

}  // namespace muon
