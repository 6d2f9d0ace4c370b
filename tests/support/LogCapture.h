// Captures what is logged, for tests that check it: while a LogCapture lives,
// the Logger writes into a LineCapture (Logger::attach) at INFO at least (or
// the level given), whatever MUON_LOG_LEVEL says, since tests count its lines. It starts
// empty, so counts see only this capture's lines even when several tests run
// in one process. The readers are static so that a callback on another
// thread can call them without a reference; one LogCapture at a time.
#pragma once

#include <string>
#include <vector>

#include "LineCapture.h"
#include "muon/base/LogAttachment.h"
#include "muon/base/Logging.h"

namespace muon {
namespace test {

class LogCapture {
 public:
  // `atLeast`: the lowest level captured (DEBUG for the lines a component
  // keeps out of an application's log).
  explicit LogCapture(Logger::LogLevel atLeast = Logger::INFO) : savedLevel_(Logger::logLevel()) {
    lines().clear();
    if (savedLevel_ > atLeast) Logger::setLogLevel(atLeast);
    attached_ = Logger::attach(lines());
  }
  ~LogCapture() {
    attached_.detach();
    Logger::setLogLevel(savedLevel_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Every line so far, in order, as one string.
  static std::string text() {
    std::string all;
    for (const std::string& line : lines().lines()) all += line;
    return all;
  }
  static bool contains(const std::string& s) { return text().find(s) != std::string::npos; }
  // How many times `s` occurs in text().
  static int count(const std::string& s) {
    std::string t = text();
    int n = 0;
    for (size_t pos = t.find(s); pos != std::string::npos; pos = t.find(s, pos + 1)) ++n;
    return n;
  }

 private:
  static LineCapture& lines() {
    static LineCapture capture;
    return capture;
  }

  const Logger::LogLevel savedLevel_;
  LogAttachment attached_;
};

}  // namespace test
}  // namespace muon
