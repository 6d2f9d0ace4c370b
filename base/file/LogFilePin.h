// LogFilePin: the oldest log file a reader (a shipper, net/relp/LogShipper.h)
// has not finished, published for LogFile's retention, which then keeps
// that file and every newer one until the files together pass a hard cap
// (LogFile::Options::pinnedMaxTotalBytes). The reader moves the pin forward
// as it finishes files; an empty pin holds nothing back. Any thread: a
// mutex guards the name (retention reads it once per roll).
#pragma once

#include <mutex>
#include <string>

namespace muon {

class LogFilePin {
 public:
  // `fileName`: a log file's name without its directory, as LogFile makes
  // them; "" lets go.
  void set(const std::string& fileName) {
    std::lock_guard<std::mutex> lock(mutex_);
    fileName_ = fileName;
  }
  std::string get() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return fileName_;
  }

 private:
  mutable std::mutex mutex_;
  std::string fileName_;
};

}  // namespace muon
