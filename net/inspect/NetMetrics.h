// The net families of the inspector's /metrics, from every live EventLoop's
// LoopCounters (LoopRegistry), labelled loop="<thread name>", tid="<tid>".
// Any thread.
#pragma once

namespace muon {
namespace net {

class MetricsWriter;

void writeNetMetrics(MetricsWriter* out);

}  // namespace net
}  // namespace muon
