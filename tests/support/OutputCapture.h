// The lines statements write through Logger's output function (the text
// path), for tests that compare them with another path's:
//   std::vector<std::string> lines = linesWrittenToOutput([] { LOG_INFO << "x"; });
// The output function is the process's: one capture at a time, and the
// output is reset to stdout after it.
#pragma once

#include <string>
#include <vector>

#include "LineCapture.h"
#include "muon/base/Logging.h"

namespace muon {
namespace test {

template <typename Body>
std::vector<std::string> linesWrittenToOutput(Body body) {
  static LineCapture* capture = nullptr;  // the output is a plain function
  LineCapture lines;
  capture = &lines;
  Logger::setOutput([](const char* line, size_t len) { capture->append(line, len); });
  body();
  Logger::setOutput(nullptr);
  capture = nullptr;
  return lines.lines();
}

}  // namespace test
}  // namespace muon
