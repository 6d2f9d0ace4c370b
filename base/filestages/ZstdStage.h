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
  // 1 by default: on a mix of varied server lines it compresses as well as
  // levels 3 and 6 (about 4x) and runs several times faster, so the backend
  // keeps up with far more producers (docs/logging.md has the figures).
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
