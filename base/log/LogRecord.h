// LogRecord: what one log statement produced, in parts, for sinks that
// format lines their own way (SyslogSink; a sink that writes JSON lines,
// whose lineFormat() is LineFormat::kJson, through writeJsonRecord).
//
//   struct MySink {
//     void append(const muon::LogRecord& record);  // instead of (line, len)
//     void flush();
//   };
//   auto attached = muon::Logger::attach(mySink);
//
// Logger::attach() hands such a sink a record per line; a sink with only
// append(const char* line, size_t len) gets the text, as before. The record
// is built from what the statement already wrote into its line, so its
// parts and `text` always agree.
//
// Every view points into memory owned by the caller and is valid only
// during the append() call; a sink that keeps a record past the call stores
// it (storeRecord below). append() runs on the thread that logged.
//
// Members may be added to this struct: set them by name, never
// aggregate-initialize one by position, and do not depend on its size.
#pragma once

#include <string>
#include <string_view>

#include "muon/base/Logfmt.h"
#include "muon/base/Logging.h"
#include "muon/base/Timestamp.h"

namespace muon {

struct LogRecord {
  // The instant the line's date-time shows, to the microsecond.
  Timestamp time;
  Logger::LogLevel level = Logger::INFO;
  // The logging thread's kernel id (the one the line prints).
  int tid = 0;
  // The statement's source file (basename, as the line's trailer prints it)
  // and line; empty and 0 for a line that no statement wrote (the backtrace
  // ring's marker lines).
  std::string_view file;
  int line = 0;
  // The function's name, for TRACE and DEBUG statements, which print it
  // before the message; empty otherwise.
  std::string_view function;
  // What the statement's << operands wrote (and LOG_SYSERR's errno text):
  // no date, thread, level, function or trailer; cut as the line cut it.
  std::string_view message;
  // The statement's fields (muon::kv, its context's) that end the message:
  // the tail of `message` from the space before the first, in their logfmt
  // form (" user=alice ms=12", LogFields.h); empty if the message does not
  // end in a field. Where the statement wrote them, not a reading of the
  // text: a message "x user=bob" has none.
  std::string_view fields;
  // The same fields taken apart, in order, where whoever made the record
  // knew them (AsyncLogging's backend, a crash recovery): fieldCount views
  // into `fields`. 0 with `fields` not empty: the encoders read `fields`.
  const LogField* fieldList = nullptr;
  size_t fieldCount = 0;
  // The whole line as Logger formatted it, '\n' included.
  std::string_view text;
};

namespace detail {

// A record kept past the call that made it (SyslogSink's queue, the
// backtrace ring; its fieldList is not kept), as storedSize() bytes written by storeRecord(): a header,
// the text, and any view that did not lie inside the text. loadRecord()
// gives the record back, its views pointing into `stored`.
size_t storedSize(const LogRecord& record);
void storeRecord(const LogRecord& record, char* out);
LogRecord loadRecord(const char* stored);

}  // namespace detail
}  // namespace muon
