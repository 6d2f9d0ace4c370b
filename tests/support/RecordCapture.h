// RecordCapture: a sink that keeps a copy of every record it is given
// (Logger::attach, AsyncLogging::forward), for tests to read after a flush.
// Any thread.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "muon/base/LogRecord.h"

namespace muon {
namespace test {

// A record with its views copied.
struct Got {
  Timestamp time;
  Logger::LogLevel level;
  int tid;
  std::string file;
  int line;
  std::string function;
  std::string message;
  std::string text;
  std::string fields;
  // The fields taken apart by the record's maker (fieldList), name and value.
  std::vector<std::pair<std::string, std::string>> fieldList;
};

inline Got copyRecord(const LogRecord& r) {
  Got g{r.time,
        r.level,
        r.tid,
        std::string(r.file),
        r.line,
        std::string(r.function),
        std::string(r.message),
        std::string(r.text),
        std::string(r.fields),
        {}};
  for (size_t i = 0; i < r.fieldCount; ++i) {
    g.fieldList.emplace_back(r.fieldList[i].name, r.fieldList[i].value);
  }
  return g;
}

class RecordCapture {
 public:
  void append(const LogRecord& record) {
    Got g = copyRecord(record);
    std::lock_guard<std::mutex> lock(mutex_);
    records_.push_back(std::move(g));
  }
  void flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++flushes_;
  }
  std::vector<Got> records() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_;
  }
  int flushes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return flushes_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Got> records_;  // guarded by mutex_
  int flushes_ = 0;           // guarded by mutex_
};

}  // namespace test
}  // namespace muon
