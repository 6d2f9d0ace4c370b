// LoopCounters: what one EventLoop has done, for monitoring (the inspector's
// /metrics): iterations, time busy, connections and bytes.
//
// Each counter is written by its loop's thread only and read by any thread.
// The write is a relaxed load and store (no locked instruction: the loop
// thread is the single writer), the read a relaxed load; a reader sees each
// counter at some recent value, never torn, and each counter never goes
// back. Counters are not consistent with one another at an instant.
//
// LoopRegistry: the live loops' counters, for a reader that wants them all.
// An EventLoop registers itself at construction and leaves at destruction;
// forEach() holds the registry's mutex, so a loop is not destroyed while its
// counters are read.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace muon {
namespace net {

// One counter with a single writer thread.
class LoopCounter {
 public:
  // Writer thread only.
  void add(uint64_t n) {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  // Any thread.
  uint64_t get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

struct LoopCounters {
  LoopCounter busyMicros;           // from each poll's return to the end of its iteration
  LoopCounter connectionsAccepted;  // by an Acceptor of this loop
  LoopCounter connectionsOpened;    // TcpConnections established in this loop
  LoopCounter connectionsClosed;    // ... and destroyed (opened - closed are open)
  LoopCounter bytesReceived;        // from the loop's connections' sockets
  LoopCounter bytesSent;            // handed to the kernel (io_uring: sends completed)
};

class EventLoop;

// A live loop as forEach shows it.
struct LoopInfo {
  const EventLoop* loop;
  std::string threadName;  // the thread that constructed it
  int tid;
  uint64_t iterations;
  const LoopCounters* counters;
};

class LoopRegistry {
 public:
  // EventLoop's constructor and destructor.
  static void add(const EventLoop* loop, const LoopCounters* counters);
  static void remove(const EventLoop* loop);
  // Calls fn for every live loop, oldest first, under the registry's mutex:
  // fn must not construct or destroy an EventLoop. Any thread.
  static void forEach(const std::function<void(const LoopInfo&)>& fn);
};

}  // namespace net
}  // namespace muon
