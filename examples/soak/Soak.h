// Soak: runs the EchoServer and its Sessions in one process and samples the
// process once a minute. Everything runs in the base loop's thread.
//
// Each sample is taken with the churn paused and every session connected
// (both ends agree), so the fd count is exact, not a moving target.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "EchoServer.h"
#include "Sessions.h"
#include "muon/net/TimerId.h"

namespace muon {
class AsyncLogging;
}  // namespace muon

namespace soak {

struct Options {
  int minutes = 10;
  int sessions = 1000;
  int threads = 1;  // I/O loops for the server, and as many for the clients
};

struct Sample {
  int minute = 0;
  long rssKib = 0;
  int fds = 0;
  bool settled = false;  // every session was up on both ends when sampled
  uint64_t linesLogged = 0;
  uint64_t dropped = 0;
  uint64_t logFiles = 0;
  uint64_t bytesEchoed = 0;
  uint64_t churned = 0;
};

// Routes the Logger's output into `log`, counting what passes; nullptr
// restores stdout. Call while no other thread logs.
void logThrough(muon::AsyncLogging* log);
// Lines and bytes handed to the Logger's output since the process started.
uint64_t linesLogged();
uint64_t bytesLogged();

class Soak {
 public:
  static constexpr size_t kBlockSize = 4096;
  static constexpr int kChurnPerSecond = 5;

  Soak(muon::net::EventLoop* loop, const Options& options, const muon::AsyncLogging* log);
  Soak(const Soak&) = delete;
  Soak& operator=(const Soak&) = delete;

  // Runs the whole soak, printing a line per sample; returns when every
  // connection is closed again.
  void run();
  const std::vector<Sample>& samples() const { return samples_; }

 private:
  using Clock = std::chrono::steady_clock;

  // Pauses the churn until every session is up on both ends for a few polls
  // in a row (or `timeoutSeconds` pass), then samples and resumes it.
  void settleThenSample(double timeoutSeconds);
  void poll(Clock::time_point deadline, int steadyPolls);
  void sample(bool settled);
  void finish();
  void quitWhenServerEmpty();

  muon::net::EventLoop* const loop_;
  const Options options_;
  const muon::AsyncLogging* const log_;
  EchoServer server_;
  Sessions sessions_;  // after server_: closed and destroyed first
  muon::net::TimerId churnTimer_;
  bool paused_ = true;  // no churn until the first sample
  Clock::time_point start_;
  Clock::time_point lastSampleTime_;
  std::vector<Sample> samples_;
};

}  // namespace soak
