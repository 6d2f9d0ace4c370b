#include "Soak.h"

#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"

namespace soak {

namespace {

// Logger's output hook is a plain function pointer, so what it feeds is a
// global, set while no other thread runs.
muon::AsyncLogging* g_log = nullptr;
std::atomic<uint64_t> g_lines{0};
std::atomic<uint64_t> g_bytes{0};

void countedOutput(const char* msg, size_t len) {
  g_lines.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(len, std::memory_order_relaxed);
  g_log->append(msg, len);
}

void flushLog() { g_log->flush(); }

constexpr double kPollSeconds = 0.1;
constexpr int kSteadyPolls = 3;  // 0.3 s with every session up: closed fds are gone by then
constexpr double kStartTimeoutSeconds = 60;   // 1000 connects through a full backlog
constexpr double kSampleTimeoutSeconds = 10;  // the churn's reconnects take milliseconds
constexpr double kShutdownTimeoutSeconds = 30;

long rssKib() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? resident * (::sysconf(_SC_PAGESIZE) / 1024) : -1;
}

// Open descriptors, not counting the one that lists them.
int openFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const struct dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count - 1;
}

}  // namespace

void logThrough(muon::AsyncLogging* log) {
  g_log = log;
  muon::Logger::setOutput(log != nullptr ? &countedOutput : nullptr);
  muon::Logger::setFlush(log != nullptr ? &flushLog : nullptr);
}

uint64_t linesLogged() { return g_lines.load(std::memory_order_relaxed); }
uint64_t bytesLogged() { return g_bytes.load(std::memory_order_relaxed); }

Soak::Soak(muon::net::EventLoop* loop, const Options& options, const muon::AsyncLogging* log)
    : loop_(loop),
      options_(options),
      log_(log),
      server_(loop, options.threads),
      sessions_(loop, server_.address(), options.threads, options.sessions, kBlockSize) {}

void Soak::run() {
  server_.start();
  sessions_.connectAll();
  churnTimer_ = loop_->runEvery(1.0, [this] {
    if (!paused_) server_.churn(kChurnPerSecond);
  });
  settleThenSample(kStartTimeoutSeconds);
  // Every wait has its own bound; past their sum something hangs (a session
  // that never closes, say), and a soak must end with a verdict.
  double budget = kStartTimeoutSeconds + options_.minutes * (60 + kSampleTimeoutSeconds) +
                  kShutdownTimeoutSeconds;
  loop_->runAfter(budget, [] {
    std::fprintf(stderr, "soak: did not finish in time; giving up\n");
    std::_Exit(1);  // the sessions are not idle: they cannot be destroyed
  });
  loop_->loop();
}

void Soak::settleThenSample(double timeoutSeconds) {
  paused_ = true;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeoutSeconds));
  poll(deadline, 0);
}

void Soak::poll(Clock::time_point deadline, int steadyPolls) {
  const auto all = static_cast<size_t>(options_.sessions);
  bool up = server_.connections() == all && sessions_.connected() == options_.sessions;
  steadyPolls = up ? steadyPolls + 1 : 0;
  if (steadyPolls >= kSteadyPolls || Clock::now() >= deadline) {
    sample(steadyPolls >= kSteadyPolls);
    return;
  }
  loop_->runAfter(kPollSeconds, [this, deadline, steadyPolls] { poll(deadline, steadyPolls); });
}

void Soak::sample(bool settled) {
  const auto now = Clock::now();
  if (samples_.empty()) start_ = now;
  Sample s;
  s.minute = static_cast<int>(samples_.size());
  s.rssKib = rssKib();
  s.fds = openFds();
  s.settled = settled;
  s.linesLogged = linesLogged();
  muon::AsyncLogging::Stats stats = log_->stats();
  s.dropped = stats.messagesDropped;
  s.logFiles = stats.file.filesCreated;
  s.bytesEchoed = server_.bytesEchoed();
  s.churned = server_.closedByChurn();

  double mibPerSecond = 0;
  if (!samples_.empty()) {
    double seconds = std::chrono::duration<double>(now - lastSampleTime_).count();
    mibPerSecond =
        static_cast<double>(s.bytesEchoed - samples_.back().bytesEchoed) / seconds / (1024 * 1024);
  }
  lastSampleTime_ = now;
  std::printf(
      "minute %d rss_kib %ld fds %d lines_logged %llu dropped %llu log_files %llu "
      "bytes_echoed %llu echo_mib_s %.1f churned %llu%s\n",
      s.minute, s.rssKib, s.fds, static_cast<unsigned long long>(s.linesLogged),
      static_cast<unsigned long long>(s.dropped), static_cast<unsigned long long>(s.logFiles),
      static_cast<unsigned long long>(s.bytesEchoed), mibPerSecond,
      static_cast<unsigned long long>(s.churned), settled ? "" : " UNSETTLED");
  if (!settled) {
    std::printf("  (server holds %zu connections, %d of %d sessions up)\n", server_.connections(),
                sessions_.connected(), options_.sessions);
  }
  std::fflush(stdout);
  samples_.push_back(s);

  if (!settled || s.minute >= options_.minutes) {
    finish();
    return;
  }
  paused_ = false;
  // Minutes are counted from the first sample, so settling does not drift them.
  auto next = start_ + std::chrono::minutes(s.minute + 1);
  double delay = std::chrono::duration<double>(next - Clock::now()).count();
  loop_->runAfter(delay > 0 ? delay : 0, [this] { settleThenSample(kSampleTimeoutSeconds); });
}

void Soak::finish() {
  paused_ = true;
  loop_->cancel(churnTimer_);
  sessions_.stopAll([this] { quitWhenServerEmpty(); });
}

void Soak::quitWhenServerEmpty() {
  if (server_.connections() == 0) {
    loop_->quit();
  } else {
    loop_->runAfter(kPollSeconds, [this] { quitWhenServerEmpty(); });
  }
}

}  // namespace soak
