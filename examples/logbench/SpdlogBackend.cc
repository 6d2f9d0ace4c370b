// spdlog 1.10 (Debian's compiled library): an async logger and a sync one,
// both writing one file through basic_file_sink_mt.
#include <spdlog/async.h>
#include <spdlog/async_logger.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "Backend.h"

namespace logbench {

namespace {

// muon's line, "20261121 08:15:02.123456Z  4321 INFO  message - file.cc:42",
// as far as spdlog's flags go: the thread id right-aligned in 5 columns, the
// level left-aligned in 6 (spdlog spells it "info", muon "INFO ": same
// length), basename and line of the call. Printed in UTC, as muon does.
const char* const kPattern = "%Y%m%d %H:%M:%S.%fZ %5t %-5l %v - %s:%#";

// spdlog's async defaults are 8192 queue slots and one worker thread: keep them.
constexpr size_t kQueueSize = 8192;
constexpr size_t kWorkers = 1;

class SpdlogBackend : public Backend {
 public:
  explicit SpdlogBackend(bool async) : async_(async) {}

  const char* name() const override { return async_ ? "spdlog-async" : "spdlog-sync"; }

  void open(const std::string& dir) override {
    sink_ = std::make_shared<spdlog::sinks::basic_file_sink_mt>(dir + "/logbench.log", true);
    if (async_) {
      pool_ = std::make_shared<spdlog::details::thread_pool>(kQueueSize, kWorkers);
      // block: wait for a free slot rather than drop, like muon's kBlock.
      logger_ = std::make_shared<spdlog::async_logger>("logbench", sink_, pool_,
                                                       spdlog::async_overflow_policy::block);
    } else {
      logger_ = std::make_shared<spdlog::logger>("logbench", sink_);
    }
    logger_->set_pattern(kPattern, spdlog::pattern_time_type::utc);
    logger_->set_level(spdlog::level::info);
  }

  void produce(uint64_t begin, uint64_t end, std::string_view extra, uint64_t* samples) override {
    spdlog::logger* logger = logger_.get();
    produceLoop(
        [logger, extra](uint64_t i) {
          // The macro passes source_loc, so %s:%# print this file and line.
          SPDLOG_LOGGER_INFO(logger, "Hello 0123456789 abcdefghijklmnopqrstuvwxyz {}{}", extra, i);
        },
        begin, end, samples);
  }

  bool produceNumbers(uint64_t begin, uint64_t end, uint64_t* samples) override {
    spdlog::logger* logger = logger_.get();
    produceLoop(
        [logger](uint64_t i) {
          SPDLOG_LOGGER_INFO(logger, "Hello 0123456789 Logging int: {}, int: {}, double: {}",
                             static_cast<int>(i), numbersJ(i), numbersD(i));
        },
        begin, end, samples);
    return true;
  }

  void logPayload(std::string_view payload) override {
    SPDLOG_LOGGER_INFO(logger_.get(), "{}", payload);
  }

  void finish() override {
    // Async: flush() only queues a flush. The pool's destructor drains the
    // queue and joins the worker; queued messages hold the logger, so it and
    // the sink stay alive until the last one is written.
    logger_->flush();
    logger_.reset();
    pool_.reset();
    sink_->flush();
    sink_.reset();  // closes the file
  }

 private:
  const bool async_;
  std::shared_ptr<spdlog::sinks::basic_file_sink_mt> sink_;
  std::shared_ptr<spdlog::details::thread_pool> pool_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace

std::unique_ptr<Backend> makeSpdlogAsyncBackend() { return std::make_unique<SpdlogBackend>(true); }
std::unique_ptr<Backend> makeSpdlogSyncBackend() { return std::make_unique<SpdlogBackend>(false); }

}  // namespace logbench
