#include "muon/net/LoopCounters.h"

#include <algorithm>
#include <mutex>
#include <sys/prctl.h>
#include <vector>

#include "muon/base/CurrentThread.h"
#include "muon/net/EventLoop.h"

namespace muon {
namespace net {

namespace {

struct Entry {
  const EventLoop* loop;
  const LoopCounters* counters;
  std::string threadName;
  int tid;
};

// Leaked on purpose: loops may be destroyed during static destruction.
std::mutex& registryMutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}
std::vector<Entry>& entries() {
  static std::vector<Entry>* v = new std::vector<Entry>;
  return *v;
}

}  // namespace

void LoopRegistry::add(const EventLoop* loop, const LoopCounters* counters) {
  char name[17] = {};
  ::prctl(PR_GET_NAME, name, 0, 0, 0);
  Entry e{loop, counters, name, CurrentThread::tid()};
  std::lock_guard<std::mutex> lock(registryMutex());
  entries().push_back(std::move(e));
}

void LoopRegistry::remove(const EventLoop* loop) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto& v = entries();
  v.erase(std::remove_if(v.begin(), v.end(), [loop](const Entry& e) { return e.loop == loop; }),
          v.end());
}

void LoopRegistry::forEach(const std::function<void(const LoopInfo&)>& fn) {
  std::lock_guard<std::mutex> lock(registryMutex());
  for (const Entry& e : entries()) {
    fn(LoopInfo{e.loop, e.threadName, e.tid, static_cast<uint64_t>(e.loop->iteration()), e.counters});
  }
}

}  // namespace net
}  // namespace muon
