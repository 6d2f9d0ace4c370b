// LogAttachment: Logger's output bound to a sink object for a scope.
//
//   muon::AsyncLogging log("server", 64 * 1024 * 1024);
//   auto attached = muon::Logger::attach(log);  // lines go to `log` ...
//   log.start();
//   ...                                         // ... until `attached` dies
//
// A sink is any object with `void append(const char* line, size_t len)` or
// `void append(const LogRecord& record)` (LogRecord.h; preferred when it has
// both), and `void flush()`, all safe to call from any thread (AsyncLogging,
// SyslogSink, StdoutSink). A sink with `LineFormat lineFormat() const` that
// says LineFormat::kJson when it is attached gets each statement's JSON line
// (JsonLines.h), made from its record, through append(line, len). While the attachment lives, Logger's lines and
// flushes go to the sink; when it is destroyed or detach()ed, they stop
// (with no sink left, both go back to stdout), so no output is left
// pointing at a sink that is gone. Declared after the sink, it is destroyed
// before it.
//
// Logger::attach() makes its sink the only one: it replaces every sink
// attached before, whose end then changes nothing. Logger::addSink() adds
// its sink to those attached (several outputs at once, each with its own
// minimum level): lines go to every one, and each attachment's end takes
// away only its own sink, in any order. Logger::setOutput/setFlush after
// either take over lines or flushes the same way as attach().
//
// Thread safety: create, move and destroy from one thread (start-up and
// shut-down). Threads that still log while the attachment is destroyed may
// be inside the sink's append() at that moment: stop or join them first, as
// the sink must outlive every call into it.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace muon {

struct LogRecord;

namespace detail {

class RecordSink;

// A sink seen through its address and plain functions, so that Logger's
// output stays a function pointer and the sink's type stays in the caller.
// attach() sets exactly one of appendText and appendRecord.
struct SinkRef {
  void* sink = nullptr;
  void (*appendText)(void* sink, const char* line, size_t len) = nullptr;
  void (*appendRecord)(void* sink, const LogRecord& record) = nullptr;
  void (*flush)(void* sink) = nullptr;
  // Set when the sink formats statements' records itself (RecordQueue.h):
  // its recordSink(), which may be nullptr.
  RecordSink* records = nullptr;
  // Set when the sink takes recorded lines (RecordFormatter.h) instead of
  // text: a line of `len` bytes whose head (the first `head` bytes) and
  // trailer (the last `trailer`) are text, its operands between them; and
  // the sink's flag that says whether it wants them now.
  void (*appendRecordedLine)(void* sink, const char* line, size_t len, size_t head,
                             size_t trailer) = nullptr;
  const std::atomic<bool>* recordedLineGate = nullptr;
};

// Makes `ref` Logger's only output (a new LoggerConfig); addSink adds it to
// the attached ones, for lines at or above `minLevel` (a Logger::LogLevel).
// detachSink takes `ref` away if it is still attached. `ref` is the
// attachment's identity: it stays at its address until detachSink returns.
void attachSink(const SinkRef* ref);
void addSink(const SinkRef* ref, int minLevel);
void detachSink(const SinkRef* ref);

}  // namespace detail

class [[nodiscard]] LogAttachment {
 public:
  LogAttachment() = default;  // attached to nothing
  // Logger::attach: `ref` becomes the only sink.
  explicit LogAttachment(detail::SinkRef ref) : ref_(std::make_unique<detail::SinkRef>(ref)) {
    detail::attachSink(ref_.get());
  }
  // Logger::addSink: `ref` joins the attached sinks, for lines at or above
  // `minLevel` (a Logger::LogLevel).
  LogAttachment(detail::SinkRef ref, int minLevel)
      : ref_(std::make_unique<detail::SinkRef>(ref)) {
    detail::addSink(ref_.get(), minLevel);
  }
  ~LogAttachment() { detach(); }
  LogAttachment(LogAttachment&& other) noexcept = default;
  LogAttachment& operator=(LogAttachment&& other) noexcept {
    if (this != &other) {
      detach();
      ref_ = std::move(other.ref_);
    }
    return *this;
  }

  // Takes this attachment's sink away now, if it is still attached; with no
  // sink left, output and flush go back to stdout.
  void detach() {
    if (ref_) {
      detail::detachSink(ref_.get());
      ref_.reset();
    }
  }

 private:
  std::unique_ptr<detail::SinkRef> ref_;
};

}  // namespace muon
