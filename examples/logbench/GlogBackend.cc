// glog 0.6: LOG(INFO) to its INFO file, with glog's own line prefix
// ("I20261121 08:15:02.123456  4321 file.cc:42] "): glog cannot print muon's
// layout without a custom prefix callback, which would measure our code
// rather than glog's.
#include <glog/logging.h>

#include <memory>

#include "Backend.h"

namespace logbench {

namespace {

class GlogBackend : public Backend {
 public:
  explicit GlogBackend(const char* argv0) {
    FLAGS_logtostderr = false;
    FLAGS_alsologtostderr = false;
    FLAGS_stderrthreshold = google::GLOG_FATAL;  // no copy of our lines on stderr
    google::InitGoogleLogging(argv0);
    // Only the INFO file: a WARNING or worse line would otherwise also go to
    // files of its own, outside the run's directory.
    google::SetLogDestination(google::GLOG_WARNING, "");
    google::SetLogDestination(google::GLOG_ERROR, "");
    google::SetLogDestination(google::GLOG_FATAL, "");
    google::SetLogSymlink(google::GLOG_INFO, "");
  }
  ~GlogBackend() override { google::ShutdownGoogleLogging(); }

  const char* name() const override { return "glog"; }

  void open(const std::string& dir) override {
    // glog reads log_dir once, when it first opens a file; a new basename per
    // run is what moves each repeat into its own directory.
    FLAGS_log_dir = dir;
    std::string base = dir + "/logbench.INFO.";
    google::SetLogDestination(google::GLOG_INFO, base.c_str());
  }

  void produce(uint64_t begin, uint64_t end, std::string_view extra, uint64_t* samples) override {
    produceLoop(
        [extra](uint64_t i) {
          LOG(INFO) << "Hello 0123456789" << " abcdefghijklmnopqrstuvwxyz " << extra << i;
        },
        begin, end, samples);
  }

  void logPayload(std::string_view payload) override { LOG(INFO) << payload; }

  void finish() override {
    google::FlushLogFiles(google::GLOG_INFO);
    // An empty basename makes glog close the file it has open.
    google::SetLogDestination(google::GLOG_INFO, "");
  }
};

}  // namespace

std::unique_ptr<Backend> makeGlogBackend(const char* argv0) {
  return std::make_unique<GlogBackend>(argv0);
}

}  // namespace logbench
