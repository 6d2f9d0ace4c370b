// For Check_test: DCHECKs compiled as a program built with NDEBUG sees them.
#define NDEBUG 1
#include "muon/base/Logging.h"

namespace {
int g_evaluated = 0;
int evaluate(int v) {
  ++g_evaluated;
  return v;
}
}  // namespace

namespace {
// Failing checks, so that an evaluated one would also abort.
void failingDChecks() {
  DCHECK(evaluate(0) == 1) << evaluate(0);
  DCHECK_EQ(evaluate(0), 1) << evaluate(0);
  DCHECK_NE(evaluate(1), 1);
  DCHECK_LT(evaluate(2), 1);
  DCHECK_LE(evaluate(2), 1);
  DCHECK_GT(evaluate(1), 2);
  DCHECK_GE(evaluate(1), 2);
}
}  // namespace

int dcheckOperandsEvaluatedUnderNdebug() {
  failingDChecks();
  return g_evaluated;
}
