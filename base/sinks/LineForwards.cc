#include "muon/base/internal/LineForwards.h"

#include <algorithm>

#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

namespace muon {
namespace detail {

uint64_t LineForwards::add(void* sink, Append appendRecord, Flush flushSink, int minLevel) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t id = ++lastId_;
  forwards_.push_back(Forward{id, sink, appendRecord, flushSink, minLevel});
  count_.store(forwards_.size(), std::memory_order_release);
  return id;
}

void LineForwards::remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  forwards_.erase(std::remove_if(forwards_.begin(), forwards_.end(),
                                 [id](const Forward& f) { return f.id == id; }),
                  forwards_.end());
  count_.store(forwards_.size(), std::memory_order_release);
}

void LineForwards::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Forward& f : forwards_) f.flush(f.sink);
}

void LineForwards::take(const LogRecord& record) {
  for (const Forward& f : forwards_) {
    if (record.level >= f.minLevel) f.append(f.sink, record);
  }
}

void LineForwards::takeLines(std::string_view chunk) {
  // The zone the lines were written in: the one in force now.
  tapLines(chunk, Logger::timeZone(), this);
}

}  // namespace detail
}  // namespace muon
