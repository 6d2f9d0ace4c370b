// Captures log lines for tests that check what was logged.
#pragma once

#include <mutex>
#include <string>

#include "muon/base/Logging.h"

namespace muon {
namespace net {
namespace test {

class LogCapture {
 public:
  // INFO at least, whatever MUON_LOG_LEVEL says: tests count INFO lines.
  // Starts empty: counts see only this capture's lines, even when several
  // tests run in one process.
  LogCapture() : savedLevel_(Logger::logLevel()) {
    {
      std::lock_guard<std::mutex> lock(mutex());
      buffer().clear();
    }
    if (savedLevel_ > Logger::INFO) Logger::setLogLevel(Logger::INFO);
    Logger::setOutput(&LogCapture::output);
  }
  ~LogCapture() {
    Logger::setOutput(nullptr);
    Logger::setLogLevel(savedLevel_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  static std::string text() {
    std::lock_guard<std::mutex> lock(mutex());
    return buffer();
  }
  static bool contains(const std::string& s) { return text().find(s) != std::string::npos; }
  static int count(const std::string& s) {
    std::string t = text();
    int n = 0;
    for (size_t pos = t.find(s); pos != std::string::npos; pos = t.find(s, pos + 1)) ++n;
    return n;
  }

 private:
  static void output(const char* msg, size_t len) {
    std::lock_guard<std::mutex> lock(mutex());
    buffer().append(msg, len);
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::string& buffer() {
    static std::string b;
    return b;
  }

  const Logger::LogLevel savedLevel_;
};

}  // namespace test
}  // namespace net
}  // namespace muon
