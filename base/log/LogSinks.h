// Which sinks a configuration sends lines to. One sink alone (with no
// minimum level) is called directly, and an AsyncLogging then defers
// formatting; several (Logger::addSink) are reached through a fan-out,
// a SinkRef that takes records: the statement formats its line once, and
// the fan-out hands it to every member whose minimum level it reaches, as
// a record or as text, and flushes every member.
//
// attachSink, addSink and detachSink (LogAttachment.h) are defined here;
// each edits the configuration under changeLoggerConfig. Internal header
// for Logging.cc.
#pragma once

#include "muon/base/internal/LoggerConfig.h"

namespace muon {
namespace detail {

// Every route of lines into `sink` cleared (text, records, recorded
// lines): Logger::setOutput took them over. Its flush stays.
void clearLineRoutes(SinkRef* sink);

}  // namespace detail
}  // namespace muon
