// A log sink that keeps every line it is given, for tests:
//   LineCapture capture;
//   auto attached = Logger::attach(capture);
// Any thread may log into it.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace muon {
namespace test {

class LineCapture {
 public:
  void append(const char* line, size_t len) {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.emplace_back(line, len);
  }
  void flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++flushes_;
  }

  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_.size();
  }
  // The newest line, or "" when there is none.
  std::string last() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_.empty() ? std::string() : lines_.back();
  }
  int flushes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return flushes_;
  }
  // Forgets every line and flush so far.
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.clear();
    flushes_ = 0;
  }
  // How many lines contain `text`.
  size_t count(const std::string& text) const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (const std::string& line : lines_) n += line.find(text) != std::string::npos;
    return n;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;  // guarded by mutex_
  int flushes_ = 0;                 // guarded by mutex_
};

}  // namespace test
}  // namespace muon
