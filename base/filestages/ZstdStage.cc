#include "muon/base/filestages/ZstdStage.h"

#include <zstd.h>

namespace muon {

struct ZstdStage::Context {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ~Context() { ZSTD_freeCCtx(cctx); }
};

ZstdStage::ZstdStage(int level) : context_(new Context), level_(level) {}

ZstdStage::~ZstdStage() = default;

bool ZstdStage::transform(std::string_view in, std::string* out, std::string* error) {
  if (!context_->cctx) {
    *error = "no memory for a zstd context";
    return false;
  }
  size_t start = out->size();
  out->resize(start + ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compressCCtx(context_->cctx, &(*out)[start], out->size() - start, in.data(),
                               in.size(), level_);
  if (ZSTD_isError(n)) {
    out->resize(start);
    *error = ZSTD_getErrorName(n);
    return false;
  }
  out->resize(start + n);
  return true;
}

}  // namespace muon
