// LineForwards: the sinks an AsyncLogging forwards its lines to
// (AsyncLogging::forward), and the tap its backend hands each line's record
// to as it writes the line.
//
// The backend calls the forwards while it holds their mutex: a forward's
// removal waits until the line being handed over is taken, so a sink is
// never called after its Forward is gone. A sink's append() must therefore
// return soon (JournaldSink and SyslogSink queue and return) and must not
// log through the same AsyncLogging.
//
// Thread safety: add(), remove() and flush() from any thread; take() from
// the thread that writes the AsyncLogging's lines (its backend, or the
// destructor once the backend is gone).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "muon/base/internal/RecordFormatter.h"

namespace muon {
namespace detail {

class LineForwards final : public LineTap {
 public:
  using Append = void (*)(void* sink, const LogRecord& record);
  using Flush = void (*)(void* sink);

  // Adds `sink`, for lines at or above `minLevel`; returns its id (never 0).
  uint64_t add(void* sink, Append append, Flush flush, int minLevel);
  // Takes the sink `id` away; once this returns, it is not called again.
  void remove(uint64_t id);
  // Flushes every sink (after the AsyncLogging's own flush).
  void flush();

  // Whether any sink is there: the writer asks before it taps (a sink
  // added meanwhile gets the lines written after its add()).
  bool any() const { return count_.load(std::memory_order_acquire) > 0; }
  // The record of one line, to every sink its level reaches.
  void take(const LogRecord& record) override;
  // Lines written as text (a buffer's lines, a report), each read back
  // into its record (tapLines).
  void takeLines(std::string_view chunk);

  // Holds the sinks for a run of take() calls (one drain, one buffer), so
  // that the lock is taken once for the run, not once a line.
  class Run {
   public:
    explicit Run(LineForwards& forwards) : lock_(forwards.mutex_) {}

   private:
    std::lock_guard<std::mutex> lock_;
  };

 private:
  struct Forward {
    uint64_t id;
    void* sink;
    Append append;
    Flush flush;
    int minLevel;
  };
  // take() is called with mutex_ held (a Run); add/remove/flush take it.
  std::mutex mutex_;
  std::vector<Forward> forwards_;
  uint64_t lastId_ = 0;
  std::atomic<size_t> count_{0};
};

}  // namespace detail
}  // namespace muon
