// LoggerConfig: every setting a log statement reads, in one immutable
// object: the levels (default and per module), the flush level, the
// backtrace ring's size, and where lines and flushes go. Logger's setters
// each copy the current configuration under a mutex, change the copy and
// publish it through one atomic pointer; a statement loads that pointer once
// (in ~Logger) and reads one consistent configuration.
//
// Reclamation: a published configuration is never freed. A statement may
// still read the one it loaded while the next is published (for as long as
// its sink's append() takes), so there is no moment at which an old one is
// known to be unused without a cost on every statement. To bound what is
// kept, a change that yields a configuration equal to one already published
// republishes that one: the memory held is one configuration (about 100
// bytes, plus its module patterns) per distinct configuration the program
// ever used, not per setter call. A program that toggles between a few
// settings keeps a few.
//
// The sites' cached levels (LogSite.h) are derived from the levels here:
// every change of the default level, the module levels or the ring's on/off
// re-resolves the registered sites under the same mutex, so that a site
// never keeps levels of a configuration replaced before it was resolved.
//
// The time zone and the clock are not here: they are read in the Logger's
// constructor (formatHeader), before the statement's configuration is
// loaded in its destructor, and each thread caches the zone's second by a
// generation number (Logging.cc); one pointer load per statement stays one.
//
// This is an internal header for Logging.cc and LogLevels.cc.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "muon/base/Logging.h"

namespace muon {
namespace detail {

struct ModuleLevel {
  std::string pattern;
  Logger::LogLevel level;

  bool operator==(const ModuleLevel& other) const {
    return level == other.level && pattern == other.pattern;
  }
};
using ModuleLevels = std::vector<ModuleLevel>;  // the last match wins

// One sink of several (Logger::addSink): `id` is its attachment's SinkRef,
// which says whose it is; `ref` a copy of it, valid in every configuration
// that holds the member, after the attachment is gone too.
struct SinkMember {
  const SinkRef* id;
  SinkRef ref;
  Logger::LogLevel minLevel;

  bool operator==(const SinkMember& other) const;
};
using SinkSet = std::vector<SinkMember>;  // in the order they were added

// The default output: one write(2) per line to stdout (Logging.cc).
void defaultOutput(const char* msg, size_t len);
void defaultFlush();

struct LoggerConfig {
  // Levels. Read by statements only through their sites, which are resolved
  // under the configuration mutex.
  Logger::LogLevel defaultLevel = Logger::INFO;
  const ModuleLevels* modules = nullptr;  // nullptr: none; kept as long as the config

  // The rare path. attentionLevel is derived (changeLoggerConfig sets it):
  // the lowest level whose lines take Logger::writeRare, TRACE while the
  // ring is on (a line may be below its statement's level) or a sink that
  // takes records is attached (the common path only writes text), else
  // min(flushLevel, FATAL).
  Logger::LogLevel flushLevel = Logger::FATAL;
  size_t backtraceLines = 0;
  int attentionLevel = Logger::FATAL;

  // Where lines go: `output` if set, else the attached sink. Where flushes
  // go: `flush` if set, else the attached sink. `attachment` names the
  // LogAttachment that set `sink`, so that only its own end undoes it.
  // With several sinks, or one with a minimum level (LogSinks.h), `sinks`
  // holds them, `attachment` is nullptr and `sink` is their fan-out: it
  // takes records, so each line is formatted by its statement and handed
  // to every member its level reaches.
  Logger::OutputFunc output = &defaultOutput;
  Logger::FlushFunc flush = &defaultFlush;
  SinkRef sink;
  const SinkRef* attachment = nullptr;
  const SinkSet* sinks = nullptr;  // kept as long as the config
  // Derived (changeLoggerConfig sets it): the attached sink's RecordSink
  // while the backtrace ring is off, else nullptr. Statements then write
  // records for it to format (RecordQueue.h) instead of text.
  RecordSink* records = nullptr;
  // Derived likewise: the sink's recordedLineGate while the ring is off.
  // While its flag is true, statements record their operands after a text
  // head (RecordFormatter.h) and hand the sink that (sink.appendRecordedLine).
  const std::atomic<bool>* recordedLineGate = nullptr;

  bool operator==(const LoggerConfig& other) const;
};

// The current configuration. Any thread, any time (a signal handler too):
// one lock-free load; the object stays valid for the life of the process.
extern std::atomic<const LoggerConfig*> g_loggerConfig;
inline const LoggerConfig& loggerConfig() {
  return *g_loggerConfig.load(std::memory_order_acquire);
}

// Copies the current configuration, lets `change` edit the copy, and
// publishes it (re-resolving the sites if the levels changed), all under the
// configuration mutex. `change` must not log. Any thread.
void changeLoggerConfig(const std::function<void(LoggerConfig&)>& change);

// The level the configuration gives statements in `file` (LogLevels.cc).
Logger::LogLevel levelFor(const LoggerConfig& config, const char* file);
// The levels MUON_LOG_LEVEL asks for, written into `config`; a malformed
// value is reported on stderr and leaves info with no modules (LogLevels.cc).
void levelsFromEnvironment(LoggerConfig* config);
// `modules` kept for the life of the process (nullptr if empty); equal
// lists are kept once. Inside a change (the configuration mutex held).
const ModuleLevels* keepModules(ModuleLevels modules);
// `sinks` kept for the life of the process (a statement may still be
// handing a line to a set that was replaced); equal sets are kept once.
// Inside a change.
const SinkSet* keepSinks(SinkSet sinks);

}  // namespace detail
}  // namespace muon
