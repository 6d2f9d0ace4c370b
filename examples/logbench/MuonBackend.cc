// muon: LOG_INFO formatted on the caller's stack, handed to AsyncLogging.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "Backend.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/base/SyncLogging.h"
#include "muon/base/filestages/AesGcmStage.h"
#include "muon/base/filestages/ZstdStage.h"

namespace logbench {

namespace {

// The workload through LOG_INFO, whichever muon sink is attached.
void produceLogInfo(uint64_t begin, uint64_t end, std::string_view extra, uint64_t* samples) {
  produceLoop(
      [extra](uint64_t i) {
        LOG_INFO << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << extra << i;
      },
      begin, end, samples);
}

void produceNumbers(uint64_t begin, uint64_t end, uint64_t* samples) {
  produceLoop(
      [](uint64_t i) {
        LOG_INFO << "Hello 0123456789 Logging int: " << static_cast<int>(i) << ", int: " << numbersJ(i)
                 << ", double: " << numbersD(i);
      },
      begin, end, samples);
}

// 3 s is AsyncLogging's usual flush interval.
constexpr int kFlushInterval = 3;

class MuonBackend : public Backend {
 public:
  explicit MuonBackend(const MuonOptions& options) : muon_(options) {}

  const char* name() const override { return "muon"; }

  void open(const std::string& dir) override {
    muon::AsyncLogging::Options options;
    options.flushInterval = kFlushInterval;
    options.policy =
        muon_.policy == MuonPolicy::kBlock ? muon::AsyncLogging::kBlock : muon::AsyncLogging::kDrop;
    options.crashSafe = muon_.crashSafe;
    options.files.maxFiles = muon_.maxFiles;
    if (muon_.zstd) options.files.stages.push_back(std::make_shared<muon::ZstdStage>());
    if (!muon_.keyFile.empty()) {
      std::string error;
      auto aes = muon::AesGcmStage::fromKeyFile(muon_.keyFile, &error);
      if (!aes) {
        std::fprintf(stderr, "logbench: %s\n", error.c_str());
        std::exit(1);
      }
      options.files.stages.push_back(aes);
    }
    log_ = std::make_unique<muon::AsyncLogging>(dir + "/logbench", muon_.rollSize, options);
    if (muon_.crashSafe && !log_->stats().crashSafe) {
      std::fprintf(stderr, "logbench: the crash-safe mode could not be set up\n");
      std::exit(1);
    }
    log_->start();
    muon::Logger::setLogLevel(muon::Logger::INFO);  // whatever MUON_LOG_LEVEL says
    attached_ = muon::Logger::attach(*log_);
    dropped_ = 0;
  }

  void produce(uint64_t begin, uint64_t end, std::string_view extra, uint64_t* samples) override {
    produceLogInfo(begin, end, extra, samples);
  }
  bool produceNumbers(uint64_t begin, uint64_t end, uint64_t* samples) override {
    logbench::produceNumbers(begin, end, samples);
    return true;
  }

  void logPayload(std::string_view payload) override { LOG_INFO << payload; }

  void finish() override {
    log_->stop();
    dropped_ = log_->stats().messagesDropped;
    spoolDiskBytes_ = 0;
    struct stat st;
    if (muon_.crashSafe && ::stat(log_->spoolPath().c_str(), &st) == 0) {
      spoolDiskBytes_ = static_cast<uint64_t>(st.st_blocks) * 512;
    }
  }

  uint64_t spoolDiskBytes() const override { return spoolDiskBytes_; }

  uint64_t dropped() const override { return dropped_; }

  void close() override {
    attached_.detach();
    log_.reset();
  }

 private:
  const MuonOptions muon_;
  std::unique_ptr<muon::AsyncLogging> log_;
  muon::LogAttachment attached_;  // detached before log_ is reset
  uint64_t dropped_ = 0;
  uint64_t spoolDiskBytes_ = 0;
};

// SyncLogging: every line written by its caller into the file buffer.
class MuonSyncBackend : public Backend {
 public:
  explicit MuonSyncBackend(off_t rollSize) : rollSize_(rollSize) {}

  const char* name() const override { return "muon-sync"; }

  void open(const std::string& dir) override {
    log_ = std::make_unique<muon::SyncLogging>(dir + "/logbench", rollSize_);
    muon::Logger::setLogLevel(muon::Logger::INFO);
    attached_ = muon::Logger::attach(*log_);
  }

  void produce(uint64_t begin, uint64_t end, std::string_view extra, uint64_t* samples) override {
    produceLogInfo(begin, end, extra, samples);
  }
  bool produceNumbers(uint64_t begin, uint64_t end, uint64_t* samples) override {
    logbench::produceNumbers(begin, end, samples);
    return true;
  }

  void logPayload(std::string_view payload) override { LOG_INFO << payload; }

  void finish() override {
    attached_.detach();
    log_.reset();  // flushes and closes the file
  }

 private:
  const off_t rollSize_;
  std::unique_ptr<muon::SyncLogging> log_;
  muon::LogAttachment attached_;
};

}  // namespace

std::unique_ptr<Backend> makeMuonSyncBackend(off_t rollSize) {
  return std::make_unique<MuonSyncBackend>(rollSize);
}

std::unique_ptr<Backend> makeMuonBackend(const MuonOptions& options) {
  return std::make_unique<MuonBackend>(options);
}

}  // namespace logbench
