// The README's example: log through AsyncLogging into ./hello.<time>.<host>.<pid>.log
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"

muon::AsyncLogging* g_log = nullptr;  // Logger's output is a plain function pointer

int main() {
  muon::AsyncLogging log("hello", 64 * 1024 * 1024);  // basename, rollSize in bytes
  g_log = &log;
  muon::Logger::setOutput([](const char* line, size_t len) { g_log->append(line, len); });
  muon::Logger::setFlush([] { g_log->flush(); });
  log.start();
  LOG_INFO << "hello " << 42 << " pi=" << muon::Fmt("%.3f", 3.14159);
  LOG_WARN << "disk at " << 93.5 << '%';
  muon::Logger::setOutput(nullptr);  // back to stdout before `log` goes away
}
