// ProcessInspector: the inspector's pages about this process, from
// /proc/self: overview, status, opened_files, threads (muduo's names).
// Each function reads fixed paths only, never one taken from a request.
// Any thread.
#pragma once

#include <string>

namespace muon {
namespace net {

class Inspector;

class ProcessInspector {
 public:
  // Adds the "proc" module's commands to `ins`.
  static void registerCommands(Inspector* ins);

  static std::string overview();
  static std::string status();       // /proc/self/status as it is
  static std::string openedFiles();  // "fd -> target", one a line
  static std::string threads();      // "tid state name", one a line
};

// The whole of a small file under /proc or /sys ("" if it cannot be read).
// For the inspector's pages only: `path` is always a constant.
std::string readProcFile(const char* path);

}  // namespace net
}  // namespace muon
