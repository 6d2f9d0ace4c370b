#include "muon/net/inspect/ProcessInspector.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "muon/net/inspect/Inspector.h"

namespace muon {
namespace net {

std::string readProcFile(const char* path) {
  std::string content;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return content;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) content.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return content;
}

namespace {

// The names in a /proc directory that are numbers, in numeric order.
std::vector<long> numericEntries(const char* dir) {
  std::vector<long> numbers;
  DIR* d = ::opendir(dir);
  if (d == nullptr) return numbers;
  while (const struct dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long n = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') numbers.push_back(n);
  }
  ::closedir(d);
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

// The value of "Key:" in /proc/self/status, trimmed.
std::string statusField(const std::string& status, const std::string& key) {
  const std::string prefix = "\n" + key + ":";
  size_t at = ("\n" + status).find(prefix);
  if (at == std::string::npos) return "";
  at += prefix.size() - 1;  // in status, past the colon
  size_t end = status.find('\n', at);
  std::string value = status.substr(at, end == std::string::npos ? std::string::npos : end - at);
  const size_t first = value.find_first_not_of(" \t");
  return first == std::string::npos ? "" : value.substr(first);
}

std::string readLink(const std::string& path) {
  char target[4096];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
  return n < 0 ? std::string("?") : std::string(target, static_cast<size_t>(n));
}

std::string trimNewline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

std::string ProcessInspector::overview() {
  const std::string status = readProcFile("/proc/self/status");
  std::string page;
  page += "pid: " + std::to_string(::getpid()) + "\n";
  page += "name: " + statusField(status, "Name") + "\n";
  page += "executable: " + readLink("/proc/self/exe") + "\n";
  page += "state: " + statusField(status, "State") + "\n";
  page += "threads: " + statusField(status, "Threads") + "\n";
  page += "opened files: " + std::to_string(numericEntries("/proc/self/fd").size()) + "\n";
  page += "virtual memory: " + statusField(status, "VmSize") + "\n";
  page += "resident memory: " + statusField(status, "VmRSS") + "\n";
  std::string cmdline = readProcFile("/proc/self/cmdline");
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  page += "command line: " + trimNewline(cmdline) + "\n";
  return page;
}

std::string ProcessInspector::status() { return readProcFile("/proc/self/status"); }

std::string ProcessInspector::openedFiles() {
  std::string page;
  for (long fd : numericEntries("/proc/self/fd")) {
    page += std::to_string(fd) + " -> " + readLink("/proc/self/fd/" + std::to_string(fd)) + "\n";
  }
  return page;
}

std::string ProcessInspector::threads() {
  std::string page;
  for (long tid : numericEntries("/proc/self/task")) {
    const std::string task = "/proc/self/task/" + std::to_string(tid);
    const std::string stat = readProcFile((task + "/stat").c_str());
    // "tid (comm) S ...": comm may hold spaces and parentheses; the state
    // follows the last ')'.
    const size_t close = stat.rfind(')');
    const char state = close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
    const std::string comm = trimNewline(readProcFile((task + "/comm").c_str()));
    page += std::to_string(tid) + " " + state + " " + comm + "\n";
  }
  return page;
}

void ProcessInspector::registerCommands(Inspector* ins) {
  ins->add("proc", "overview", [](HttpRequest::Method, const Inspector::ArgList&) { return overview(); },
           "print basic overview");
  ins->add("proc", "status", [](HttpRequest::Method, const Inspector::ArgList&) { return status(); },
           "print /proc/self/status");
  ins->add("proc", "opened_files",
           [](HttpRequest::Method, const Inspector::ArgList&) { return openedFiles(); },
           "list the opened files: fd -> target");
  ins->add("proc", "threads", [](HttpRequest::Method, const Inspector::ArgList&) { return threads(); },
           "list the threads: tid, state, name");
}

}  // namespace net
}  // namespace muon
