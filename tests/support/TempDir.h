// Test helpers for files: a temporary directory removed at the end of the
// test, and small readers. For tests only.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace muon {
namespace test {

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/muon_test.XXXXXX";
    const char* made = ::mkdtemp(templ);
    path_ = made ? made : "";
  }
  ~TempDir() {
    for (const std::string& f : files()) ::unlink(f.c_str());
    ::rmdir(path_.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

  // Full paths of the regular files in the directory, sorted by name.
  std::vector<std::string> files() const { return filesIn(path_); }

  // The same for any directory.
  static std::vector<std::string> filesIn(const std::string& dir) {
    std::vector<std::string> result;
    if (DIR* d = ::opendir(dir.c_str())) {
      while (struct dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") result.push_back(dir + "/" + name);
      }
      ::closedir(d);
    }
    std::sort(result.begin(), result.end());
    return result;
  }

 private:
  std::string path_;
};

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of a file, without their '\n'. A last line with no '\n' is kept
// and marked by `*unterminated` (lines must never be split, so tests check it).
inline std::vector<std::string> readLines(const std::string& path, bool* unterminated = nullptr) {
  std::string text = readFile(path);
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      if (unterminated) *unterminated = true;
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The lines of the log files (".log" in the name) in `dir`, file after file.
inline std::vector<std::string> logLinesIn(const TempDir& dir) {
  std::vector<std::string> lines;
  for (const std::string& f : dir.files()) {
    if (f.find(".log") == std::string::npos) continue;
    for (std::string& l : readLines(f)) lines.push_back(std::move(l));
  }
  return lines;
}

}  // namespace test
}  // namespace muon
