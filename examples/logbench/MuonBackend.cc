// muon: LOG_INFO formatted on the caller's stack, handed to AsyncLogging.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "Backend.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"

namespace logbench {

namespace {

// As in muduo's asynclogging bench: files roll at 500 MB, so a long-message
// run also pays for a few rolls. 3 s is AsyncLogging's usual flush interval.
constexpr off_t kRollSize = 500 * 1000 * 1000;
constexpr int kFlushInterval = 3;

// Logger's output hook is a plain function pointer, so the logger it feeds is
// a global. Written by the main thread only while no producer runs; thread
// creation and join order those writes before and after every read.
muon::AsyncLogging* g_async = nullptr;

void asyncOutput(const char* msg, size_t len) { g_async->append(msg, len); }
void asyncFlush() { g_async->flush(); }

class MuonBackend : public Backend {
 public:
  MuonBackend(MuonPolicy policy, bool crashSafe) : policy_(policy), crashSafe_(crashSafe) {}

  const char* name() const override { return "muon"; }

  void open(const std::string& dir) override {
    muon::AsyncLogging::Options options;
    options.flushInterval = kFlushInterval;
    options.policy =
        policy_ == MuonPolicy::kBlock ? muon::AsyncLogging::kBlock : muon::AsyncLogging::kDrop;
    options.crashSafe = crashSafe_;
    log_ = std::make_unique<muon::AsyncLogging>(dir + "/logbench", kRollSize, options);
    if (crashSafe_ && !log_->stats().crashSafe) {
      std::fprintf(stderr, "logbench: the crash-safe mode could not be set up\n");
      std::exit(1);
    }
    log_->start();
    g_async = log_.get();
    muon::Logger::setLogLevel(muon::Logger::INFO);  // whatever MUON_LOG_LEVEL says
    muon::Logger::setOutput(&asyncOutput);
    muon::Logger::setFlush(&asyncFlush);
    dropped_ = 0;
  }

  void produce(uint64_t begin, uint64_t end, std::string_view extra, uint64_t* samples) override {
    produceLoop(
        [extra](uint64_t i) {
          LOG_INFO << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << extra << i;
        },
        begin, end, samples);
  }

  void finish() override {
    log_->stop();
    dropped_ = log_->stats().messagesDropped;
    spoolDiskBytes_ = 0;
    struct stat st;
    if (crashSafe_ && ::stat(log_->spoolPath().c_str(), &st) == 0) {
      spoolDiskBytes_ = static_cast<uint64_t>(st.st_blocks) * 512;
    }
  }

  uint64_t spoolDiskBytes() const override { return spoolDiskBytes_; }

  uint64_t dropped() const override { return dropped_; }

  void close() override {
    muon::Logger::setOutput(nullptr);
    muon::Logger::setFlush(nullptr);
    g_async = nullptr;
    log_.reset();
  }

 private:
  const MuonPolicy policy_;
  const bool crashSafe_;
  std::unique_ptr<muon::AsyncLogging> log_;
  uint64_t dropped_ = 0;
  uint64_t spoolDiskBytes_ = 0;
};

}  // namespace

std::unique_ptr<Backend> makeMuonBackend(MuonPolicy policy, bool crashSafe) {
  return std::make_unique<MuonBackend>(policy, crashSafe);
}

}  // namespace logbench
