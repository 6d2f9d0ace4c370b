// SyslogSink over UDP while rsyslogd (tests/support/Rsyslogd.h) is SIGKILLed
// five times, each time down for 100 ms and restarted on the same port,
// 200,000 numbered lines logged at 20,000 a second: every line either
// arrives or is counted (lost, dropped) but for a few: at most 500 a run
// (the batches the killed daemons were writing) beyond what no sender can
// count and the test measures: datagrams the kernel dropped at a full
// receive buffer or at a port without a daemon, and those waiting unread
// on a daemon's socket when it died. It prints how long append() took
// around the restarts, for
// examples/bench/syslog_restart_bench.sh, which runs it several times; a
// time is not asserted here. And the count that shows append() cannot wait
// for a malloc lock (the sender's frees, a fork()): once warm, it
// allocates nothing. ctest labels `syslog` and `fault`;
// MUON_SYSLOG_RESTART_LINES changes the number of lines.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <new>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "Rsyslogd.h"
#include "muon/base/LogRecord.h"
#include "muon/base/SyslogSink.h"

using muon::LogRecord;
using muon::SyslogOptions;
using muon::SyslogSink;
using muon::test::Rsyslogd;
using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;
using std::chrono::milliseconds;

// Allocations made by the thread that counts them (operator new replaced for
// this binary; counting only while `counting` is set on that thread).
namespace {
thread_local bool counting = false;
thread_local long allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  if (counting) ++allocations;
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

// A UDP counter of the kernel's, over IPv4 and IPv6, system-wide: `name`
// in /proc/net/snmp's Udp lines plus "Udp6" `name` in /proc/net/snmp6
// ("RcvbufErrors": datagrams dropped at a socket's full receive buffer;
// "NoPorts": datagrams that arrived for a port no socket had). -1 if it
// cannot be read.
long udpCounter(const char* name) {
  long total = 0;
  bool found = false;
  if (FILE* f = std::fopen("/proc/net/snmp", "r")) {
    char names[1024], values[1024];
    while (std::fgets(names, sizeof names, f) != nullptr &&
           std::fgets(values, sizeof values, f) != nullptr) {
      if (std::strncmp(names, "Udp: ", 5) != 0) continue;
      // The two lines name and give the fields in the same order.
      char* nameSave = nullptr;
      char* valueSave = nullptr;
      char* field = strtok_r(names, " \n", &nameSave);
      char* value = strtok_r(values, " \n", &valueSave);
      for (; field != nullptr && value != nullptr;
           field = strtok_r(nullptr, " \n", &nameSave), value = strtok_r(nullptr, " \n", &valueSave)) {
        if (std::strcmp(field, name) == 0) {
          total += std::atol(value);
          found = true;
        }
      }
    }
    std::fclose(f);
  }
  if (FILE* f = std::fopen("/proc/net/snmp6", "r")) {
    const std::string v6 = std::string("Udp6") + name;
    char field[128];
    long value;
    while (std::fscanf(f, "%127s %ld", field, &value) == 2) {
      if (v6 == field) total += value;
    }
    std::fclose(f);
  }
  return found ? total : -1;
}

// How much a kernel counter grew between two readings; 0 if either failed.
long growth(long before, long after) { return before >= 0 && after >= 0 ? after - before : 0; }

// Bytes waiting in the receive queue of the UDP socket bound to
// 127.0.0.1:`port` (/proc/net/udp's rx_queue: the memory the kernel charges
// for the datagrams queued, not their payload); -1 if none is found.
long udpReceiveQueueBytes(uint16_t port) {
  FILE* f = std::fopen("/proc/net/udp", "r");
  if (f == nullptr) return -1;
  char line[512];
  long bytes = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned address = 0, localPort = 0;
    unsigned long rxQueue = 0;
    // 127.0.0.1 as /proc/net/udp writes it: the address's bytes read as a
    // little-endian word.
    if (std::sscanf(line, " %*d: %8X:%4X %*X:%*X %*X %*X:%lX", &address, &localPort, &rxQueue) ==
            3 &&
        address == 0x0100007F && localPort == port) {
      bytes = static_cast<long>(rxQueue);
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

// The calling thread's context switches: voluntary (it waited) and not
// (the scheduler gave its CPU to another).
struct Switches {
  long voluntary;
  long involuntary;
};
Switches switches() {
  struct rusage usage = {};
  ::getrusage(RUSAGE_THREAD, &usage);
  return Switches{usage.ru_nvcsw, usage.ru_nivcsw};
}

// The record of line `i`, its message written into `message`.
LogRecord restartRecord(long i, char* message, size_t room) {
  LogRecord r;
  r.level = muon::Logger::INFO;
  r.tid = 4242;
  r.file = "restarts.cc";
  r.line = 7;
  const int n = std::snprintf(message, room, "restart %07ld", i);
  r.message = std::string_view(message, static_cast<size_t>(n));
  r.text = r.message;
  r.time = muon::Timestamp::now();
  return r;
}

// What the kernel charges a UDP receive queue for one of the test's
// datagrams, as a sink with these options sends them: 64 of them sent to a
// socket that never reads, its rx_queue divided by 64. -1 if it cannot be
// read.
long bytesPerQueuedDatagram(SyslogOptions options) {
  constexpr long kDatagrams = 64;
  uint16_t port = 0;
  const int fd = muon::test::bindLoopback(SOCK_DGRAM, &port);
  if (fd < 0) return -1;
  options.port = port;
  long bytes = -1;
  {
    SyslogSink sink(options);
    char message[32];
    for (long i = 0; i < kDatagrams; ++i) sink.append(restartRecord(i, message, sizeof message));
    sink.flush();  // sent: a loopback datagram is queued by the time send() returns
    if (sink.stats().sent == kDatagrams) bytes = udpReceiveQueueBytes(options.port);
  }
  ::close(fd);
  return bytes > 0 ? bytes / kDatagrams : -1;
}

// The numbers in the daemon's lines "6 INFO  restart 0000042".
std::set<long> numbersReceived(const Rsyslogd& daemon, const std::string& app) {
  std::set<long> numbers;
  for (const std::string& line : daemon.received(app)) {
    const size_t at = line.find("restart ");
    if (at != std::string::npos) numbers.insert(std::strtol(line.c_str() + at + 8, nullptr, 10));
  }
  return numbers;
}

TEST(SyslogSinkRestarts, UdpFiveDaemonRestartsLoseAtMost500LinesUncounted) {
  Rsyslogd daemon;
  // The daemon's main queue Direct: it writes what it has read before it
  // reads more, so what a kill takes with it is what waited on its socket
  // (measured below) and the batch it was writing, not a queue of thousands
  // in its memory that the test cannot see.
  daemon.addConfig("main_queue(queue.type=\"Direct\")\n");
  std::string why;
  if (!daemon.start(&why)) {
    if (Rsyslogd::required()) FAIL() << "rsyslogd: " << why;
    GTEST_SKIP() << "no rsyslogd: " << why;
  }
  const char* scale = std::getenv("MUON_SYSLOG_RESTART_LINES");
  const long lines = scale != nullptr ? std::atol(scale) : 200000;
  constexpr long kPerSecond = 20000;
  constexpr int kRestarts = 5;
  // Beyond what the kernel counts: the batch a killed daemon was writing,
  // and what reached its socket between the look at it and the kill.
  constexpr long kSlack = 500;
  SyslogOptions options;
  options.transport = SyslogOptions::kUdp;
  options.port = daemon.udpPort();
  options.appName = "muon-restarts";
  const long bytesPerDatagram = bytesPerQueuedDatagram(options);
  ASSERT_GT(bytesPerDatagram, 0) << "no UDP receive queue in /proc/net/udp";
  SyslogSink sink(options);
  const long fullBufferBefore = udpCounter("RcvbufErrors");
  const long noPortBefore = udpCounter("NoPorts");

  // The producer: line i at i / kPerSecond seconds, each append timed, and
  // whether the thread slept in it (a voluntary context switch: a wait) or
  // was preempted (an involuntary one: the CPU went to another thread).
  std::atomic<long> produced{0};
  std::vector<int64_t> appendNs(static_cast<size_t>(lines));
  std::vector<long> sleptAt;
  sleptAt.reserve(static_cast<size_t>(lines));
  std::vector<bool> preempted(static_cast<size_t>(lines));
  std::thread producer([&] {
    char message[32];
    const auto start = Clock::now();
    for (long i = 0; i < lines; ++i) {
      std::this_thread::sleep_until(start + microseconds(i * 1000000 / kPerSecond));
      const LogRecord r = restartRecord(i, message, sizeof message);
      const Switches before = switches();
      const auto t0 = Clock::now();
      sink.append(r);
      const auto t1 = Clock::now();
      const Switches after = switches();
      appendNs[static_cast<size_t>(i)] = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
      if (after.voluntary != before.voluntary) sleptAt.push_back(i);
      if (after.involuntary != before.involuntary) preempted[static_cast<size_t>(i)] = true;
      produced.store(i + 1, std::memory_order_relaxed);
    }
  });
  // The restarts, evenly through the run. A daemon that died stays down for
  // 100 ms (systemd's default RestartSec), a few thousand lines that the
  // sink must count lost or send once it is back.
  std::vector<long> restartAt;
  long unreadAtKills = 0;  // datagrams queued unread on the daemon's socket when it died
  bool restarted = true;
  for (int k = 1; k <= kRestarts; ++k) {
    const long at = lines * k / (kRestarts + 1);
    while (produced.load(std::memory_order_relaxed) < at) std::this_thread::sleep_for(milliseconds(1));
    restartAt.push_back(at);
    daemon.pause();
    const long queued = udpReceiveQueueBytes(daemon.udpPort());
    if (queued > 0) unreadAtKills += (queued + bytesPerDatagram - 1) / bytesPerDatagram;
    daemon.kill();
    std::this_thread::sleep_for(milliseconds(100));
    restarted = restarted && daemon.start(&why);
  }
  producer.join();
  ASSERT_TRUE(restarted) << why;
  sink.flush();

  // Everything the daemon will write, once its count stops growing.
  std::set<long> received;
  for (size_t last = ~size_t{0}; last != received.size();) {
    last = received.size();
    std::this_thread::sleep_for(milliseconds(300));
    received = numbersReceived(daemon, options.appName);
  }
  const SyslogSink::Stats stats = sink.stats();
  const long counted = static_cast<long>(stats.lost + stats.dropped);
  const long uncounted = lines - static_cast<long>(received.size()) - counted;
  // What no sender can count, which the kernel counts (system-wide: another
  // test's drops only widen the allowance): datagrams a daemon that a
  // loaded machine keeps from reading lost at its full receive buffer, and
  // those that reached the port while no daemon had it, before a refusal
  // came back (slow to come when the kernel's network work is queued
  // behind busy threads).
  const long fullBuffer = growth(fullBufferBefore, udpCounter("RcvbufErrors"));
  const long noPort = growth(noPortBefore, udpCounter("NoPorts"));

  // Appends around the restarts (100 ms before to 1 s after each), and over 1 ms.
  int64_t maxNearRestart = 0;
  long overOneMs = 0;
  for (long at : restartAt) {
    const long from = std::max(0L, at - kPerSecond / 10);
    const long to = std::min(lines, at + kPerSecond);
    for (long i = from; i < to; ++i) maxNearRestart = std::max(maxNearRestart, appendNs[static_cast<size_t>(i)]);
  }
  long overOneMsPreempted = 0;
  for (size_t i = 0; i < appendNs.size(); ++i) {
    overOneMs += appendNs[i] > 1000000;
    overOneMsPreempted += appendNs[i] > 1000000 && preempted[i];
  }
  std::vector<int64_t> sorted = appendNs;
  std::sort(sorted.begin(), sorted.end());
  std::printf("lines %ld received %zu lost %llu dropped %llu uncounted %ld reconnects %llu "
              "kernel receive-buffer drops %ld no-port drops %ld unread at the kills %ld\n",
              lines, received.size(), static_cast<unsigned long long>(stats.lost),
              static_cast<unsigned long long>(stats.dropped), uncounted,
              static_cast<unsigned long long>(stats.reconnects), fullBuffer, noPort,
              unreadAtKills);
  std::printf("append: median %lld ns, p99.9 %lld ns, max %lld ns, max near restarts %lld ns, "
              "over 1 ms %ld (preempted %ld), slept %ld\n",
              static_cast<long long>(sorted[sorted.size() / 2]),
              static_cast<long long>(sorted[sorted.size() * 999 / 1000]),
              static_cast<long long>(sorted.back()), static_cast<long long>(maxNearRestart),
              overOneMs, overOneMsPreempted, static_cast<long>(sleptAt.size()));
  std::printf("slept (line, us, lines from the nearest restart):");
  for (long i : sleptAt) {
    long nearest = lines;
    for (long at : restartAt) nearest = std::min(nearest, std::labs(i - at));
    std::printf(" %ld/%lld/%ld", i, static_cast<long long>(appendNs[static_cast<size_t>(i)] / 1000), nearest);
  }
  std::printf("\n");
  EXPECT_GE(uncounted, 0) << "a line counted lost also arrived";
  EXPECT_LE(uncounted, kSlack + fullBuffer + noPort + unreadAtKills)
      << fullBuffer << " dropped at a full receive buffer, " << noPort
      << " at a port without a daemon, " << unreadAtKills << " unread when a daemon died";
}

// append() copies a line into the queue's buffer, which the sender hands
// back emptied: once the buffers have grown to a batch, appending allocates
// nothing, so it can never wait for a malloc lock (held by the sender
// freeing, or by a fork() of the process, as around a daemon's restart).
// It allocated every line (the copy) and freed it in the sender.
TEST(SyslogSinkRestarts, AppendAllocatesNothingOnceWarm) {
  int daemon = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(daemon, 0);
  Rsyslogd paths;  // a temporary directory for the socket, never started
  SyslogOptions options;
  options.path = paths.unixSocket();
  options.sendTimeoutMs = 50;  // the socket is read only between rounds
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", options.path.c_str());
  ASSERT_EQ(::bind(daemon, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr), 0);
  SyslogSink sink(options);
  LogRecord r;
  r.file = "restarts.cc";
  r.line = 7;
  r.message = "a line of the usual length, with a field user=alice";
  r.text = r.message;
  r.fields = r.message.substr(r.message.find(" user="));
  auto appendSome = [&](int pairs) {
    for (int i = 0; i < pairs; ++i) {
      sink.append(r);
      sink.append("not from Logger\n", 16);
    }
  };
  char drain[4096];
  // Both buffers grow, to bursts ten times the counted one: however the
  // sender happened to take them then, and takes the counted one now, it
  // finds room (a warm-up of the counted size alone could leave a buffer
  // short of it when the sender is preempted).
  for (int round = 0; round < 3; ++round) {
    appendSome(2000);
    sink.flush();
    while (::recv(daemon, drain, sizeof drain, MSG_DONTWAIT) > 0) {
    }
  }
  counting = true;
  appendSome(200);
  counting = false;
  EXPECT_EQ(allocations, 0);
  ::close(daemon);
}

}  // namespace
