// ZstdStage: each chunk becomes one zstd frame (with its content size), so
// a .zst log is a valid multi-frame zstd stream at every moment: `zstdcat`
// reads it while it grows and after a kill -9 (every whole frame).
// Part of muon::filestages. One LogFile's thread calls it (FileStage.h).
#pragma once

#include <memory>

#include "muon/base/FileStage.h"

namespace muon {

class ZstdStage : public FileStage {
 public:
  // 1 by default: on logbench's lines it compresses ~x as well as level 3
  // at about twice the speed (docs/logging.md measures 1, 3 and 6).
  static constexpr int kDefaultLevel = 1;

  explicit ZstdStage(int level = kDefaultLevel);
  ~ZstdStage() override;
  ZstdStage(const ZstdStage&) = delete;
  ZstdStage& operator=(const ZstdStage&) = delete;

  const char* suffix() const override { return ".zst"; }
  bool transform(std::string_view in, std::string* out, std::string* error) override;

 private:
  struct Context;
  std::unique_ptr<Context> context_;
  const int level_;
};

}  // namespace muon
