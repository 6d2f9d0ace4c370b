#include "muon/net/inspect/SystemInspector.h"

#include <sys/utsname.h>
#include <unistd.h>

#include "muon/net/inspect/Inspector.h"
#include "muon/net/inspect/ProcessInspector.h"

namespace muon {
namespace net {

namespace {

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// The line of /proc/meminfo that starts with `key`.
std::string meminfoLine(const std::string& meminfo, const std::string& key) {
  size_t at = meminfo.find(key + ":");
  if (at == std::string::npos) return key + ": ?";
  return meminfo.substr(at, meminfo.find('\n', at) - at);
}

}  // namespace

std::string SystemInspector::overview() {
  std::string page;
  struct utsname un;
  if (::uname(&un) == 0) {
    page += std::string("system: ") + un.sysname + " " + un.release + " " + un.version + " " +
            un.machine + "\n";
    page += std::string("hostname: ") + un.nodename + "\n";
  }
  page += "processors online: " + std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) + "\n";
  page += "uptime (s, idle s): " + firstLine(readProcFile("/proc/uptime")) + "\n";
  page += "loadavg: " + firstLine(readProcFile("/proc/loadavg")) + "\n";
  const std::string meminfo = readProcFile("/proc/meminfo");
  page += meminfoLine(meminfo, "MemTotal") + "\n";
  page += meminfoLine(meminfo, "MemAvailable") + "\n";
  return page;
}

std::string SystemInspector::loadavg() { return readProcFile("/proc/loadavg"); }
std::string SystemInspector::meminfo() { return readProcFile("/proc/meminfo"); }
std::string SystemInspector::stat() { return readProcFile("/proc/stat"); }

void SystemInspector::registerCommands(Inspector* ins) {
  ins->add("sys", "overview", [](HttpRequest::Method, const Inspector::ArgList&) { return overview(); },
           "print system overview");
  ins->add("sys", "loadavg", [](HttpRequest::Method, const Inspector::ArgList&) { return loadavg(); },
           "print /proc/loadavg");
  ins->add("sys", "meminfo", [](HttpRequest::Method, const Inspector::ArgList&) { return meminfo(); },
           "print /proc/meminfo");
  ins->add("sys", "stat", [](HttpRequest::Method, const Inspector::ArgList&) { return stat(); },
           "print /proc/stat");
}

}  // namespace net
}  // namespace muon
