#include "muon/net/inspect/NetMetrics.h"

#include <string>
#include <vector>

#include "muon/net/LoopCounters.h"
#include "muon/net/inspect/MetricsWriter.h"

namespace muon {
namespace net {

namespace {

// One loop's values, copied under the registry's mutex.
struct LoopSample {
  std::string loop;
  std::string tid;
  uint64_t iterations;
  uint64_t busyMicros;
  uint64_t accepted;
  uint64_t opened;
  uint64_t closed;
  uint64_t received;
  uint64_t sent;
};

}  // namespace

void writeNetMetrics(MetricsWriter* out) {
  std::vector<LoopSample> loops;
  LoopRegistry::forEach([&loops](const LoopInfo& info) {
    const LoopCounters& c = *info.counters;
    loops.push_back(LoopSample{info.threadName, std::to_string(info.tid), info.iterations,
                               c.busyMicros.get(), c.connectionsAccepted.get(),
                               c.connectionsOpened.get(), c.connectionsClosed.get(),
                               c.bytesReceived.get(), c.bytesSent.get()});
  });
  using W = MetricsWriter;
  auto each = [&](const char* name, W::Type type, const char* help, auto value) {
    out->family(name, type, help);
    for (const LoopSample& l : loops) out->sample({{"loop", l.loop}, {"tid", l.tid}}, value(l));
  };
  each("muon_net_loop_iterations_total", W::kCounter, "Times the event loop has polled.",
       [](const LoopSample& l) { return l.iterations; });
  each("muon_net_loop_busy_seconds_total", W::kCounter,
       "Time the event loop spent in callbacks: from each poll's return to the end of its iteration (I/O events, timers, queued functors).",
       [](const LoopSample& l) { return static_cast<double>(l.busyMicros) / 1e6; });
  each("muon_net_connections_accepted_total", W::kCounter, "Connections accepted by the loop's acceptors.",
       [](const LoopSample& l) { return l.accepted; });
  each("muon_net_connections_open", W::kGauge, "TCP connections established in the loop and not yet destroyed.",
       [](const LoopSample& l) {
         // The two counters are read a moment apart: never below zero.
         return l.opened >= l.closed ? l.opened - l.closed : uint64_t{0};
       });
  each("muon_net_bytes_received_total", W::kCounter, "Bytes read from the loop's TCP connections.",
       [](const LoopSample& l) { return l.received; });
  each("muon_net_bytes_sent_total", W::kCounter, "Bytes the kernel took for sending on the loop's TCP connections.",
       [](const LoopSample& l) { return l.sent; });
}

}  // namespace net
}  // namespace muon
