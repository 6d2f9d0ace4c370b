// fmtlog's calling-thread instructions for the two statements log_instructions' peer rows hold,
// counted as muon's log_instructions rows are (callgrind --toggle-collect).
#define FMTLOG_HEADER_ONLY
#include "fmtlog.h"

__attribute__((noipa)) void fmtlogIntIntDouble(int i, int j, double d) {
  logi("Logging int: {}, int: {}, double: {}", i, j, d);
}
__attribute__((noipa)) void fmtlogHelloWorld() { logi("hello world"); }

int main() {
  fmtlog::setLogFile("/dev/null", false);
  fmtlog::startPollingThread(1000000);
  for (int i = 0; i < 100000; ++i) fmtlogIntIntDouble(i, i + 1, i * 0.5);
  for (int i = 0; i < 100000; ++i) fmtlogHelloWorld();
  fmtlog::stopPollingThread();
}
