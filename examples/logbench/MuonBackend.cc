// muon: LOG_INFO formatted on the caller's stack, handed to AsyncLogging.
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

class MuonBackend : public Backend {
 public:
  explicit MuonBackend(MuonPolicy policy) : policy_(policy) {}

  const char* name() const override { return "muon"; }

  void open(const std::string& dir) override {
    log_ = std::make_unique<muon::AsyncLogging>(
        dir + "/logbench", kRollSize, kFlushInterval,
        policy_ == MuonPolicy::kBlock ? muon::AsyncLogging::kBlock : muon::AsyncLogging::kDrop);
    log_->start();
    muon::Logger::setLogLevel(muon::Logger::INFO);  // whatever MUON_LOG_LEVEL says
    attached_ = muon::Logger::attach(*log_);
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
  }

  uint64_t dropped() const override { return dropped_; }

  void close() override {
    attached_.detach();
    log_.reset();
  }

 private:
  const MuonPolicy policy_;
  std::unique_ptr<muon::AsyncLogging> log_;
  muon::LogAttachment attached_;  // detached before log_ is reset
  uint64_t dropped_ = 0;
};

}  // namespace

std::unique_ptr<Backend> makeMuonBackend(MuonPolicy policy) {
  return std::make_unique<MuonBackend>(policy);
}

}  // namespace logbench
