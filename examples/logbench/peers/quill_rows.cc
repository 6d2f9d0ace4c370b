// Quill's calling-thread instructions for the two statements log_instructions' peer rows hold,
// counted as muon's log_instructions rows are (callgrind --toggle-collect).
#include "quill/Backend.h"
#include "quill/Frontend.h"
#include "quill/LogMacros.h"
#include "quill/Logger.h"
#include "quill/sinks/NullSink.h"

quill::Logger* g_logger;
__attribute__((noipa)) void quillIntIntDouble(int i, int j, double d) {
  LOG_INFO(g_logger, "Logging int: {}, int: {}, double: {}", i, j, d);
}
__attribute__((noipa)) void quillHelloWorld() { LOG_INFO(g_logger, "hello world"); }

int main() {
  quill::Backend::start();
  auto sink = quill::Frontend::create_or_get_sink<quill::NullSink>("null");
  g_logger = quill::Frontend::create_or_get_logger("root", std::move(sink));
  for (int i = 0; i < 100000; ++i) {
    quillIntIntDouble(i, i + 1, i * 0.5);
    if (i % 1000 == 0) g_logger->flush_log();
  }
  for (int i = 0; i < 100000; ++i) {
    quillHelloWorld();
    if (i % 1000 == 0) g_logger->flush_log();
  }
  g_logger->flush_log();
}
