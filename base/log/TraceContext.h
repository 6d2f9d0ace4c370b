// TraceContext: W3C Trace Context's `traceparent` (version 00), parsed and
// formatted, and TraceScope, which puts a trace's ids on every line logged
// while it lives, so that the lines of one request can be joined to its
// trace in any store.
//
//   traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
//                ver trace-id (32 hex)               parent-id (16) flags
//
//   muon::TraceContext incoming;
//   if (muon::TraceContext::parse(header, &incoming)) {
//     const muon::TraceContext span = incoming.child();  // this service's span
//     muon::TraceScope scope(span);
//     LOG_INFO << "handling";  // ... trace.id=4bf9... span.id=<span's id>
//   }
//
// The ids go in as the fields `trace.id` and `span.id` (ECS's names) of a
// LogContext (LogFields.h): in text and logfmt lines, JSON, RFC 5424
// STRUCTURED-DATA, the RELP shipper's frames and the journal (TRACE_ID,
// SPAN_ID). HttpServer does this for each request that carries a valid
// traceparent (net/http/HttpServer.h); other protocols use the same two
// classes. Parsing follows the specification: lower-case hex only; a trace-id
// or parent-id of all zeros, version ff, or a version-00 header of any other
// length is invalid and ignored; a later version is read by its first four
// fields if what follows them starts with '-'. Values: any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "muon/base/LogFields.h"

namespace muon {

class TraceContext {
 public:
  // No trace (ids of zero bytes, which no valid header has), for parse to fill.
  TraceContext() = default;
  // Reads `header` (a traceparent value; spaces and tabs around it are
  // allowed, as HTTP's field values have them) into *out; false, with *out
  // unchanged, if it is not valid.
  static bool parse(std::string_view header, TraceContext* out);
  // A new trace: random trace-id and parent-id, flags `flags` (01: sampled).
  static TraceContext newTrace(uint8_t flags = 0);

  // The same trace and flags with a new random parent-id: the span of the
  // work done on receiving this one.
  TraceContext child() const;

  std::string_view traceId() const { return std::string_view(traceId_, sizeof traceId_); }
  // The parent-id field: this context's span.
  std::string_view spanId() const { return std::string_view(spanId_, sizeof spanId_); }
  uint8_t flags() const { return flags_; }
  bool sampled() const { return (flags_ & 1) != 0; }

  // "00-<trace-id>-<parent-id>-<flags>": a traceparent (and a
  // traceresponse) value.
  std::string traceparent() const;

 private:
  char traceId_[32] = {};
  char spanId_[16] = {};
  uint8_t flags_ = 0;
};

// Puts `trace.id` and `span.id` of a context on every line the thread logs
// while it lives (a LogContext). Made and ended on one thread, nested as
// LogContext is.
class TraceScope {
 public:
  explicit TraceScope(const TraceContext& trace)
      : context_{{"trace.id", trace.traceId()}, {"span.id", trace.spanId()}} {}

 private:
  LogContext context_;
};

}  // namespace muon
