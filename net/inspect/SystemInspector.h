// SystemInspector: the inspector's pages about the machine, from /proc:
// overview, loadavg, meminfo, stat (muduo's names). Fixed paths only.
// Any thread.
#pragma once

#include <string>

namespace muon {
namespace net {

class Inspector;

class SystemInspector {
 public:
  // Adds the "sys" module's commands to `ins`.
  static void registerCommands(Inspector* ins);

  static std::string overview();
  static std::string loadavg();  // /proc/loadavg
  static std::string meminfo();  // /proc/meminfo
  static std::string stat();     // /proc/stat
};

}  // namespace net
}  // namespace muon
