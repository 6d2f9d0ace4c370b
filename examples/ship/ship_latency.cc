// ship_latency --relp HOST:PORT --out FILE --dir DIR [--lines N] [--rate R]
//              [--flush-interval S] [--window W]
// The end-to-end latency of a line shipped from inside a server (the
// shipping benchmark, examples/bench/ship_bench.sh): a LogShipper on an
// EventLoopThread follows DIR/lat's files, woken by the AsyncLogging that
// writes them (Options::afterWrite, flushInterval S, default 1); the main
// thread logs N lines (default 5,000) with LOG_INFO at R lines a second
// (default 500), each carrying its number; another thread follows FILE,
// the receiving rsyslogd's output, and notes when each number appears.
// One clock (steady) for both ends, in one process.
//
// Stdout, one line:
//   lines N rate R flush_interval S p50_ms A p90_ms B p99_ms C max_ms D
// Exit 1 if not every line arrived within 10 s of the last one logged.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "CommandLine.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/EventLoopThread.h"
#include "muon/net/InetAddress.h"
#include "muon/net/relp/LogShipper.h"

using Clock = std::chrono::steady_clock;

namespace {

const char kMark[] = "shiplat=";

int usage(bool help = false) {
  std::fputs("usage: ship_latency --relp HOST:PORT --out FILE --dir DIR [--lines N] [--rate R]\n"
             "                    [--flush-interval S] [--window W]\n",
             help ? stdout : stderr);
  return help ? 0 : 2;
}

template <typename F>
void runSync(muon::net::EventLoop* loop, F f) {
  std::promise<void> done;
  loop->runInLoop([&] {
    f();
    done.set_value();
  });
  done.get_future().wait();
}

// Follows `path` until every number below `count` was seen or `stop` is
// set; arrived[n] is when number n first appeared, *seen how many did
// (arrived is the caller's to read once this returns).
void follow(const std::string& path, size_t count, std::vector<Clock::time_point>* arrived,
            std::atomic<size_t>* seen, const std::atomic<bool>* stop) {
  int fd = -1;
  std::string pending;
  char buf[1 << 16];
  while (seen->load() < count && !stop->load()) {
    if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ssize_t n = 0;
    bool got = false;
    while (fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0) {
      pending.append(buf, static_cast<size_t>(n));
      got = true;
    }
    const Clock::time_point now = Clock::now();
    if (got) {
      size_t start = 0, end;
      while ((end = pending.find('\n', start)) != std::string::npos) {
        const size_t at = pending.find(kMark, start);
        if (at != std::string::npos && at < end) {
          const size_t number = std::strtoull(pending.c_str() + at + sizeof kMark - 1, nullptr, 10);
          if (number < count && (*arrived)[number] == Clock::time_point()) {
            (*arrived)[number] = now;
            ++*seen;
          }
        }
        start = end + 1;
      }
      pending.erase(0, start);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (fd >= 0) ::close(fd);
}

double percentileMs(std::vector<double> sorted, double p) {
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[i];
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  if (muon::examples::helpRequested(argc, argv)) return usage(true);
  std::string relpAddress, out, dir;
  long lines = 5000, rate = 500, flushInterval = 1, window = 128;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const char* value = argv[i + 1];
    bool ok = true;
    if (arg == "--relp") relpAddress = value;
    else if (arg == "--out") out = value;
    else if (arg == "--dir") dir = value;
    else if (arg == "--lines") ok = muon::examples::parseInt(value, 1, 10000000, &lines);
    else if (arg == "--rate") ok = muon::examples::parseInt(value, 1, 1000000, &rate);
    else if (arg == "--flush-interval") ok = muon::examples::parseInt(value, 1, 60, &flushInterval);
    else if (arg == "--window") ok = muon::examples::parseInt(value, 1, 100000, &window);
    else ok = false;
    if (!ok) return usage();
  }
  muon::net::InetAddress server;
  if (argc % 2 == 0 || out.empty() || dir.empty() ||
      !muon::net::InetAddress::parse(relpAddress, &server)) {
    return usage();
  }

  muon::net::EventLoopThread thread;
  muon::net::EventLoop* loop = thread.startLoop();
  muon::net::relp::LogShipperOptions options;
  options.basename = dir + "/lat";
  options.stateFile = dir + "/lat.state";
  options.relp.window = static_cast<size_t>(window);
  std::unique_ptr<muon::net::relp::LogShipper> shipper;
  std::string error;
  runSync(loop, [&] {
    shipper = std::make_unique<muon::net::relp::LogShipper>(loop, server, options);
    if (!shipper->start(&error)) shipper.reset();
  });
  if (!shipper) {
    std::fprintf(stderr, "ship_latency: %s\n", error.c_str());
    return 1;
  }

  const size_t count = static_cast<size_t>(lines);
  std::vector<Clock::time_point> logged(count), arrived(count);
  std::atomic<size_t> seen{0};
  std::atomic<bool> stop{false};
  std::thread follower(follow, out, count, &arrived, &seen, &stop);
  {
    muon::AsyncLogging::Options logOptions;
    logOptions.flushInterval = static_cast<int>(flushInterval);
    logOptions.afterWrite = shipper->wakeFunction();
    muon::AsyncLogging log(options.basename, 1 << 30, logOptions);
    log.start();
    muon::LogAttachment attached = muon::Logger::attach(log);
    const Clock::time_point start = Clock::now();
    for (size_t i = 0; i < count; ++i) {
      std::this_thread::sleep_until(start + std::chrono::microseconds(1000000 * i / static_cast<size_t>(rate)));
      logged[i] = Clock::now();
      LOG_INFO << kMark << i;
    }
    // Every line logged has been written by the backend within flushInterval;
    // the follower gets 10 s more for the shipping.
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(flushInterval + 10);
    while (seen.load() < count && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop = true;
    follower.join();
  }
  runSync(loop, [&] { shipper.reset(); });

  std::vector<double> ms;
  for (size_t i = 0; i < count; ++i) {
    if (arrived[i] == Clock::time_point()) continue;
    ms.push_back(std::chrono::duration<double, std::milli>(arrived[i] - logged[i]).count());
  }
  if (ms.size() != count) {
    std::fprintf(stderr, "ship_latency: %zu of %zu lines arrived in %s\n", ms.size(), count, out.c_str());
    return 1;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("lines %zu rate %ld flush_interval %ld p50_ms %.1f p90_ms %.1f p99_ms %.1f max_ms %.1f\n",
              count, rate, flushInterval, percentileMs(ms, 50), percentileMs(ms, 90),
              percentileMs(ms, 99), ms.back());
  return 0;
}
