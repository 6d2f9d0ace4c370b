// inspect_server: a small server to look at with the inspector, and the
// program the inspector's tests and examples/inspect/prometheus.yml scrape.
//
//   inspect_server [--port N] [--allow-write] [--token T] [--log-dir DIR]
//
// It runs, in one EventLoop: the Inspector on 127.0.0.1:N (0 or none: a
// free port), an echo service on another free loopback port, and an
// AsyncLogging (files DIR/inspect_server.*.log, DIR defaulting to $TMPDIR
// or /tmp) that gets a line every millisecond. Once both listen it prints
//   inspector on 127.0.0.1:PORT
//   echo on 127.0.0.1:PORT
// and stops on SIGTERM or SIGINT. --allow-write serves PUT /log/level;
// --token T then asks for "Authorization: Bearer T" (without --allow-write
// a token protects nothing: a warning on stderr). --help: the usage on
// stdout, status 0; a bad command line: the usage on stderr, status 2.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"
#include "muon/net/inspect/Inspector.h"
#include "CommandLine.h"
#include "StopSignals.h"

using namespace muon;
using namespace muon::net;

namespace {

int usage(const char* program, bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: %s [--port N] [--allow-write] [--token T] [--log-dir DIR]\n"
               "  the inspector on 127.0.0.1:N (0 or none: a free port), an echo service,\n"
               "  and a log that gets about 1,000 lines a second: DIR/inspect_server.*.log,\n"
               "  DIR $TMPDIR or /tmp unless --log-dir\n"
               "  --allow-write  serve PUT /log/level\n"
               "  --token T      PUT /log/level then needs 'Authorization: Bearer T'\n",
               program);
  return help ? 0 : 2;
}

}  // namespace

int main(int argc, char* argv[]) {
  long port = 0;
  Inspector::Options options;
  const char* tmp = std::getenv("TMPDIR");
  std::string logDir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  if (examples::helpRequested(argc, argv)) return usage(argv[0], true);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--port" && i + 1 < argc) {
      if (!examples::parseInt(argv[++i], 0, 65535, &port)) return usage(argv[0], false);
    } else if (arg == "--allow-write") {
      options.allowWrite = true;
    } else if (arg == "--token" && i + 1 < argc && argv[i + 1][0] != '\0') {
      options.token = argv[++i];
    } else if (arg == "--log-dir" && i + 1 < argc) {
      logDir = argv[++i];
    } else {
      return usage(argv[0], false);
    }
  }
  if (!options.token.empty() && !options.allowWrite) {
    std::fprintf(stderr, "inspect_server: warning: --token without --allow-write: writes are off, "
                         "the token guards nothing\n");
  }

  EventLoop loop;
  examples::StopSignals stop(&loop, "inspect_server");

  AsyncLogging log(logDir + "/inspect_server", 64 * 1024 * 1024, 1);
  log.start();
  LogAttachment attached = Logger::attach(log);

  Inspector inspector(&loop, Inspector::loopback(static_cast<uint16_t>(port)), "inspector");
  inspector.setOptions(options);
  inspector.addLogging(log, "main");
  inspector.start();

  TcpServer echo(&loop, InetAddress(0, true), "echo");
  echo.setMessageCallback([](const TcpConnectionPtr& conn, Buffer* buf, Timestamp) { conn->send(buf); });
  echo.start();

  uint64_t tick = 0;
  loop.runEvery(0.001, [&tick] { LOG_INFO << "tick " << ++tick; });

  std::printf("inspector on %s\n", inspector.listenAddress().toIpPort().c_str());
  std::printf("echo on %s\n", echo.listenAddress().toIpPort().c_str());
  std::fflush(stdout);

  loop.loop();
  attached.detach();
  log.stop();
  return 0;
}
