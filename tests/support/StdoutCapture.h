// What a test's code writes to stdout's descriptor (the Logger's default
// output, StdoutSink, printf), captured through a file:
//   std::string out = muon::test::stdoutDuring([] { LOG_INFO << "x"; });
// One thread at a time: it swaps the process's descriptor 1. For tests only.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

#include "TempDir.h"

namespace muon {
namespace test {

template <typename Fn>
std::string stdoutDuring(Fn fn) {
  TempDir dir;
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  FILE* file = std::fopen(dir.file("stdout").c_str(), "w");
  ::dup2(::fileno(file), STDOUT_FILENO);
  fn();
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::fclose(file);
  return readFile(dir.file("stdout"));
}

}  // namespace test
}  // namespace muon
