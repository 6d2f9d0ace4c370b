// The one logger configuration, its publication, and the registry of sites
// whose levels are resolved from it (under the same mutex).
#include "muon/base/internal/LoggerConfig.h"

#include <pthread.h>

#include <algorithm>
#include <mutex>

#include "muon/base/internal/BacktraceRing.h"

namespace muon {
namespace detail {

namespace {

// What statements see before anything is set: info, stdout. Constant, so
// that a statement in another file's static initializer finds it too.
constexpr LoggerConfig kInitialConfig{};

// Everything below is guarded by this mutex.
std::mutex g_mutex;
bool g_environmentRead = false;
LogSite* g_sites = nullptr;

// Every configuration and module list ever published, never freed (see
// LoggerConfig.h): a statement may still be reading one. Not destroyed at
// exit either, for threads that log while static objects are destroyed.
struct Kept {
  std::vector<const LoggerConfig*> configs{&kInitialConfig};
  std::vector<const ModuleLevels*> modules;
  std::vector<const SinkSet*> sinks;
};
Kept& kept() {
  static Kept* k = new Kept;
  return *k;
}

void resolve(LogSite& site, const LoggerConfig& config) {
  const Logger::LogLevel level = levelFor(config, site.file);
  // level first: a statement that sees the new threshold sees its level.
  site.level.store(level, std::memory_order_relaxed);
  site.threshold.store(config.backtraceLines > 0 ? Logger::TRACE : level,
                       std::memory_order_relaxed);
}

void resolveAll(const LoggerConfig& config) {
  for (LogSite* s = g_sites; s != nullptr; s = s->next) resolve(*s, config);
}

void publish(LoggerConfig next) {
  const bool everyLine = next.backtraceLines > 0 || next.sink.appendRecord != nullptr;
  next.attentionLevel = everyLine ? Logger::TRACE : std::min(next.flushLevel, Logger::FATAL);
  // The ring keeps lines below the level as text records: no deferral then.
  next.records = next.backtraceLines == 0 ? next.sink.records : nullptr;
  next.recordedLineGate = next.backtraceLines == 0 ? next.sink.recordedLineGate : nullptr;
  std::vector<const LoggerConfig*>& configs = kept().configs;
  auto same = std::find_if(configs.begin(), configs.end(),
                           [&](const LoggerConfig* c) { return *c == next; });
  if (same == configs.end()) {
    configs.push_back(new LoggerConfig(next));
    same = configs.end() - 1;
  }
  g_loggerConfig.store(*same, std::memory_order_release);
  // Threads resolve their statements' route again (Statement.h).
  g_routeGeneration.fetch_add(1, std::memory_order_release);
}

// MUON_LOG_LEVEL's levels, once, before the first site is resolved or the
// first setter runs.
void readEnvironmentOnce() {
  if (g_environmentRead) return;
  g_environmentRead = true;
  LoggerConfig next = *g_loggerConfig.load(std::memory_order_relaxed);
  levelsFromEnvironment(&next);
  publish(next);
  resolveAll(next);
}

// At start-up, so that a malformed MUON_LOG_LEVEL is reported then and
// Logger::logLevel() answers it from main() on.
struct EnvironmentAtStartUp {
  EnvironmentAtStartUp() {
    std::lock_guard<std::mutex> lock(g_mutex);
    readEnvironmentOnce();
  }
};
EnvironmentAtStartUp g_environmentAtStartUp;

// fork() copies only the calling thread: a child that inherited g_mutex
// locked by another thread would hang at its first setter (or a shared
// object it loads, whose sites register). So the fork waits for the mutex, and both sides release it;
// the backtrace ring's mutex with it, taken after ours as enableBacktrace
// takes them (one handler, so that no registration order can reverse them).
void lockBeforeFork() {
  g_mutex.lock();
  backtraceLockForFork();
}
void unlockAfterFork() {
  backtraceUnlockAfterFork();
  g_mutex.unlock();
}
struct AtForkRegistration {
  AtForkRegistration() { ::pthread_atfork(&lockBeforeFork, &unlockAfterFork, &unlockAfterFork); }
};
AtForkRegistration g_atForkRegistration;

bool sameSink(const SinkRef& a, const SinkRef& b) {
  return a.sink == b.sink && a.appendText == b.appendText && a.appendRecord == b.appendRecord &&
         a.flush == b.flush && a.records == b.records &&
         a.appendRecordedLine == b.appendRecordedLine && a.recordedLineGate == b.recordedLineGate;
}

}  // namespace

std::atomic<const LoggerConfig*> g_loggerConfig{&kInitialConfig};
std::atomic<unsigned> g_routeGeneration{1};

bool SinkMember::operator==(const SinkMember& other) const {
  return id == other.id && minLevel == other.minLevel && sameSink(ref, other.ref);
}

bool LoggerConfig::operator==(const LoggerConfig& other) const {
  // Module lists and sink sets are kept once per content (keepModules,
  // keepSinks): the pointers say.
  return defaultLevel == other.defaultLevel && modules == other.modules &&
         flushLevel == other.flushLevel && backtraceLines == other.backtraceLines &&
         attentionLevel == other.attentionLevel && output == other.output &&
         flush == other.flush && sameSink(sink, other.sink) && attachment == other.attachment &&
         sinks == other.sinks && records == other.records &&
         recordedLineGate == other.recordedLineGate;
}

void changeLoggerConfig(const std::function<void(LoggerConfig&)>& change) {
  std::lock_guard<std::mutex> lock(g_mutex);
  readEnvironmentOnce();
  const LoggerConfig& old = *g_loggerConfig.load(std::memory_order_relaxed);
  LoggerConfig next = old;
  change(next);
  const bool levelsChanged = next.defaultLevel != old.defaultLevel ||
                             next.modules != old.modules ||
                             (next.backtraceLines > 0) != (old.backtraceLines > 0);
  publish(next);
  if (levelsChanged) resolveAll(next);
}

const ModuleLevels* keepModules(ModuleLevels modules) {
  if (modules.empty()) return nullptr;
  std::vector<const ModuleLevels*>& lists = kept().modules;
  for (const ModuleLevels* list : lists) {
    if (*list == modules) return list;
  }
  lists.push_back(new ModuleLevels(std::move(modules)));
  return lists.back();
}

const SinkSet* keepSinks(SinkSet sinks) {
  // Sets are kept once per content: a configuration compares their pointers.
  std::vector<const SinkSet*>& sets = kept().sinks;
  for (const SinkSet* set : sets) {
    if (*set == sinks) return set;
  }
  sets.push_back(new SinkSet(std::move(sinks)));
  return sets.back();
}

SiteRegistration::SiteRegistration(LogSite& site) : site_(site) {
  std::lock_guard<std::mutex> lock(g_mutex);
  readEnvironmentOnce();
  if (!site.registered) {
    site.registered = true;
    site.prev = nullptr;
    site.next = g_sites;
    if (g_sites != nullptr) g_sites->prev = &site;
    g_sites = &site;
  }
  resolve(site, *g_loggerConfig.load(std::memory_order_relaxed));
}

SiteRegistration::~SiteRegistration() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!site_.registered) return;
  site_.registered = false;
  if (site_.prev != nullptr) {
    site_.prev->next = site_.next;
  } else {
    g_sites = site_.next;
  }
  if (site_.next != nullptr) site_.next->prev = site_.prev;
  site_.prev = site_.next = nullptr;
}

static_assert(LogSite::kInitialThreshold == Logger::INFO &&
                  LoggerConfig{}.defaultLevel == Logger::INFO,
              "a site not yet registered has the initial configuration's level");

}  // namespace detail
}  // namespace muon
