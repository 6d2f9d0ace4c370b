#include "muon/base/internal/LogOperands.h"

#include "muon/base/internal/OperandReplay.h"

namespace muon {
namespace detail {

bool replayOperands(const char* p, size_t n, LogStream& out) { return replayOperandsInline(p, n, out); }

}  // namespace detail
}  // namespace muon
