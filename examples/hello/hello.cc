// The README's example: log through AsyncLogging into ./hello.<time>.<host>.<pid>.log
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"

int main() {
  muon::AsyncLogging log("hello", 64 * 1024 * 1024);  // basename, rollSize in bytes
  auto attached = muon::Logger::attach(log);  // stdout again when it goes out of scope
  log.start();
  LOG_INFO << "hello " << 42 << " pi=" << muon::Fmt("%.3f", 3.14159);
  LOG_WARN << "disk at " << 93.5 << '%' << muon::kv("mount", "/var");
}
