// The README's shipper: a program that ships its own log over RELP.
//   hello_ship HOST:PORT
// AsyncLogging writes ./hello_ship.<time>.<host>.<pid>.log; a LogShipper on
// the main thread's EventLoop, woken by the logging backend after each
// write, ships every line to the RELP server at HOST:PORT (rsyslog's imrelp)
// and keeps the acknowledged position in ./hello_ship.state. The program
// ends once the server has acknowledged its two lines: prints
// "shipped N lines" and exits 0; 1 if that took over 10 s; 2 on bad usage.
#include <cstdint>
#include <cstdio>
#include <string>

#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/relp/LogShipper.h"

int main(int argc, char* argv[]) {
  muon::net::InetAddress server;
  if (argc != 2 || !muon::net::InetAddress::parse(argv[1], &server)) {
    std::fputs("usage: hello_ship HOST:PORT (a numeric address: 127.0.0.1:2514)\n", stderr);
    return 2;
  }
  muon::net::EventLoop loop;  // in a server: one of its loops
  muon::net::relp::LogShipperOptions ship;
  ship.basename = "hello_ship";
  ship.stateFile = "hello_ship.state";
  muon::net::relp::LogShipper shipper(&loop, server, ship);
  std::string error;
  if (!shipper.start(&error)) {
    std::fprintf(stderr, "hello_ship: %s\n", error.c_str());
    return 1;
  }

  muon::AsyncLogging::Options options;
  options.afterWrite = shipper.wakeFunction();  // the backend wakes the shipper after each write
  muon::AsyncLogging log(ship.basename, 64 * 1024 * 1024, options);
  auto attached = muon::Logger::attach(log);
  log.start();
  LOG_INFO << "hello " << 42 << " over RELP";
  LOG_WARN << "disk at " << 93.5 << '%' << muon::kv("mount", "/var");

  // Stops once both lines are acknowledged, or after 10 s.
  muon::net::TimerId watch, deadline;
  auto stop = [&] {
    loop.cancel(watch);
    loop.cancel(deadline);
    shipper.stop([&](bool) { loop.quit(); });
  };
  watch = loop.runEvery(0.01, [&] {
    if (shipper.counters().shipped >= 2) stop();
  });
  deadline = loop.runAfter(10, stop);
  loop.loop();
  const uint64_t shipped = shipper.counters().shipped;
  std::printf("shipped %llu lines\n", static_cast<unsigned long long>(shipped));
  return shipped >= 2 ? 0 : 1;
}
