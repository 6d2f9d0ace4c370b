// For LogLevels_test: a statement in another source file.
#include "muon/base/Logging.h"

void logDebugInAnotherFile() { LOG_DEBUG << "from the other file"; }
