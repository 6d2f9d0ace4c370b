// statement_flood DIR iid|hello N: one thread logs N of one of issue 41's two
// statements through AsyncLogging (kBlock, attached) into DIR, timed from
// the first statement until stop() returns, when every line is in the file;
// prints "<msg/s> msg/s, <seconds> s". Only the API every build since
// 8edd3d2 has, so that the same source, compiled against an older tree's
// library, measures it beside this one (docs/logging.md, "End to end").
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"

namespace {

// Out of line, so that the values are the statement's operands at run time.
__attribute__((noinline)) int secondInt(uint64_t i) { return static_cast<int>(i * 7); }
__attribute__((noinline)) double aDouble(uint64_t i) { return static_cast<double>(i) * 0.5; }

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc == 4 ? argv[2] : "";
  if (which != "iid" && which != "hello") {
    std::fprintf(stderr, "usage: statement_flood DIR iid|hello N\n");
    return 2;
  }
  char* end = nullptr;
  const uint64_t n = std::strtoull(argv[3], &end, 10);
  if (*end != '\0' || n == 0) {
    std::fprintf(stderr, "statement_flood: N is a positive count, not '%s'\n", argv[3]);
    return 2;
  }
  muon::Logger::setLogLevel(muon::Logger::INFO);
  muon::AsyncLogging::Options options;
  options.policy = muon::AsyncLogging::kBlock;
  muon::AsyncLogging log(std::string(argv[1]) + "/flood", off_t{1} << 40, options);
  log.start();
  auto attached = muon::Logger::attach(log);
  const auto start = std::chrono::steady_clock::now();
  if (which == "iid") {
    for (uint64_t i = 0; i < n; ++i) {
      LOG_INFO << "Logging int: " << static_cast<int>(i) << ", int: " << secondInt(i)
               << ", double: " << aDouble(i);
    }
  } else {
    for (uint64_t i = 0; i < n; ++i) LOG_INFO << "hello world";
  }
  log.stop();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.0f msg/s, %.3f s\n", static_cast<double>(n) / seconds, seconds);
  return 0;
}
