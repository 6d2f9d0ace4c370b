// The attached sinks: one called directly, or several through a fan-out.
#include "muon/base/internal/LogSinks.h"

#include <algorithm>
#include <utility>

#include "muon/base/LogRecord.h"

namespace muon {
namespace detail {

namespace {

// The fan-out's append: a record to a member that takes records, its text
// to one that takes text; members whose minimum the line is below skip it.
void fanOutRecord(void* set, const LogRecord& record) {
  for (const SinkMember& member : *static_cast<const SinkSet*>(set)) {
    if (record.level < member.minLevel) continue;
    const SinkRef& ref = member.ref;
    if (ref.appendRecord != nullptr) {
      ref.appendRecord(ref.sink, record);
    } else if (ref.appendText != nullptr) {
      ref.appendText(ref.sink, record.text.data(), record.text.size());
    }
  }
}

// Flushes every member, whatever its minimum (FATAL's flush among them).
void fanOutFlush(void* set) {
  for (const SinkMember& member : *static_cast<const SinkSet*>(set)) {
    if (member.ref.flush != nullptr) member.ref.flush(member.ref.sink);
  }
}

// The sinks `c` has attached, lines taken over by setOutput or not.
SinkSet membersOf(const LoggerConfig& c) {
  if (c.sinks != nullptr) return *c.sinks;
  // One attachment alone: its SinkRef lives until its detachSink returns,
  // and has every route (c.sink may have lost some to setOutput/setFlush).
  if (c.attachment != nullptr) return SinkSet{{c.attachment, *c.attachment, Logger::TRACE}};
  return SinkSet();
}

// Makes `members` the attached sinks of `c`; a setOutput()/setFlush() made
// since they were attached keeps the lines or the flushes.
void setMembers(LoggerConfig& c, SinkSet members) {
  c.sinks = nullptr;
  c.attachment = nullptr;
  c.sink = SinkRef();
  if (members.empty()) {
    // Only the sinks' own routes are put back: a setOutput() made since stays.
    if (c.output == nullptr) c.output = &defaultOutput;
    if (c.flush == nullptr) c.flush = &defaultFlush;
    return;
  }
  if (members.size() == 1 && members[0].minLevel == Logger::TRACE) {
    // As attach(): the sink called directly, its deferral kept.
    c.sink = members[0].ref;
    c.attachment = members[0].id;
  } else {
    c.sinks = keepSinks(std::move(members));
    c.sink.sink = const_cast<SinkSet*>(c.sinks);
    c.sink.appendRecord = &fanOutRecord;
    c.sink.flush = &fanOutFlush;
  }
  if (c.output != nullptr) clearLineRoutes(&c.sink);
  if (c.flush != nullptr) c.sink.flush = nullptr;
}

}  // namespace

void clearLineRoutes(SinkRef* sink) {
  sink->appendText = nullptr;
  sink->appendRecord = nullptr;
  sink->records = nullptr;
  sink->appendRecordedLine = nullptr;
  sink->recordedLineGate = nullptr;
}

void attachSink(const SinkRef* ref) {
  changeLoggerConfig([&](LoggerConfig& c) {
    c.output = nullptr;
    c.flush = nullptr;
    setMembers(c, SinkSet{{ref, *ref, Logger::TRACE}});
  });
}

void addSink(const SinkRef* ref, int minLevel) {
  changeLoggerConfig([&](LoggerConfig& c) {
    // Sinks whose lines a setOutput() took over are not joined again.
    SinkSet members = c.output == nullptr ? membersOf(c) : SinkSet();
    members.push_back({ref, *ref, static_cast<Logger::LogLevel>(minLevel)});
    c.output = nullptr;
    c.flush = nullptr;
    setMembers(c, std::move(members));
  });
}

void detachSink(const SinkRef* ref) {
  changeLoggerConfig([&](LoggerConfig& c) {
    SinkSet members = membersOf(c);
    auto gone = std::remove_if(members.begin(), members.end(),
                               [&](const SinkMember& m) { return m.id == ref; });
    if (gone == members.end()) return;  // replaced by a newer attach()
    members.erase(gone, members.end());
    setMembers(c, std::move(members));
  });
}

}  // namespace detail
}  // namespace muon
