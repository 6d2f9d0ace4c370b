// muon: LOG_INFO formatted on the caller's stack, handed to AsyncLogging.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "Backend.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/base/SyncLogging.h"
#include "muon/base/filestages/AesGcmStage.h"
#include "muon/base/filestages/ZstdStage.h"

namespace logbench {

namespace {

// The fields of --fields N: a string, an integer and a floating-point
// value, repeating ("user", "count", "ratio", then "user1", "count1", ...).
struct Field {
  std::string name;
  int kind;  // 0 string, 1 integer, 2 floating point
};
std::vector<Field> fieldsOf(int n) {
  static const char* const kNames[] = {"user", "count", "ratio"};
  std::vector<Field> fields;
  for (int k = 0; k < n; ++k) {
    fields.push_back(Field{std::string(kNames[k % 3]) + (k >= 3 ? std::to_string(k / 3) : ""), k % 3});
  }
  return fields;
}

// Streams each field with a value made from the message's index.
struct FieldValues {
  const std::vector<Field>& fields;
  uint64_t i;
};
muon::LogStream& operator<<(muon::LogStream& s, const FieldValues& v) {
  static const std::string kUser = "alice";
  for (const Field& f : v.fields) {
    if (f.kind == 0) {
      s << muon::kv(f.name, kUser);
    } else if (f.kind == 1) {
      s << muon::kv(f.name, v.i);
    } else {
      s << muon::kv(f.name, static_cast<double>(v.i) * 0.25);
    }
  }
  return s;
}

// The workload through LOG_INFO, whichever muon sink is attached; with
// `fields`, each line carries them after its message.
void produceLogInfo(uint64_t begin, uint64_t end, std::string_view extra,
                    const std::vector<Field>& fields, uint64_t* samples) {
  if (fields.empty()) {
    produceLoop(
        [extra](uint64_t i) {
          LOG_INFO << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << extra << i;
        },
        begin, end, samples);
    return;
  }
  produceLoop(
      [extra, &fields](uint64_t i) {
        LOG_INFO << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << extra << i
                 << FieldValues{fields, i};
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
  explicit MuonBackend(const MuonOptions& options)
      : muon_(options), fields_(fieldsOf(options.fields)) {}

  const char* name() const override { return "muon"; }

  void open(const std::string& dir) override {
    muon::AsyncLogging::Options options;
    options.flushInterval = kFlushInterval;
    options.policy =
        muon_.policy == MuonPolicy::kBlock ? muon::AsyncLogging::kBlock : muon::AsyncLogging::kDrop;
    options.crashSafe = muon_.crashSafe;
    options.files.maxFiles = muon_.maxFiles;
    options.files.format = muon_.format;
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
    produceLogInfo(begin, end, extra, fields_, samples);
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
  const std::vector<Field> fields_;
  std::unique_ptr<muon::AsyncLogging> log_;
  muon::LogAttachment attached_;  // detached before log_ is reset
  uint64_t dropped_ = 0;
  uint64_t spoolDiskBytes_ = 0;
};

// SyncLogging: every line written by its caller into the file buffer.
class MuonSyncBackend : public Backend {
 public:
  explicit MuonSyncBackend(const MuonOptions& options)
      : options_(options), fields_(fieldsOf(options.fields)) {}

  const char* name() const override { return "muon-sync"; }

  void open(const std::string& dir) override {
    muon::SyncLogging::Options options;
    options.files.format = options_.format;
    log_ = std::make_unique<muon::SyncLogging>(dir + "/logbench", options_.rollSize, options);
    muon::Logger::setLogLevel(muon::Logger::INFO);
    attached_ = muon::Logger::attach(*log_);
  }

  void produce(uint64_t begin, uint64_t end, std::string_view extra, uint64_t* samples) override {
    produceLogInfo(begin, end, extra, fields_, samples);
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
  const MuonOptions options_;
  const std::vector<Field> fields_;
  std::unique_ptr<muon::SyncLogging> log_;
  muon::LogAttachment attached_;
};

}  // namespace

std::unique_ptr<Backend> makeMuonSyncBackend(const MuonOptions& options) {
  return std::make_unique<MuonSyncBackend>(options);
}

std::unique_ptr<Backend> makeMuonBackend(const MuonOptions& options) {
  return std::make_unique<MuonBackend>(options);
}

}  // namespace logbench
