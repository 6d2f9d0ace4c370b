// Checks the lines of a multi-threaded logging test: each is
// "... INFO  t<thread> <seq> - file:line", and each thread's sequence
// numbers run 0, 1, 2 ... in file order up to perThread. Parsed by hand: a
// regex per line makes a million-line test crawl under the sanitizers.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace muon {
namespace test {

inline void expectPerThreadOrder(const std::vector<std::string>& lines, int threads, int perThread) {
  ASSERT_FALSE(lines.empty());
  std::vector<long> next(static_cast<size_t>(threads), 0);
  for (const std::string& line : lines) {
    const size_t at = line.find(" INFO  t");
    ASSERT_NE(at, std::string::npos) << line;
    char* end = nullptr;
    const long t = std::strtol(line.c_str() + at + 8, &end, 10);
    ASSERT_EQ(*end, ' ') << line;
    const long seq = std::strtol(end + 1, &end, 10);
    ASSERT_EQ(std::string(end, 3), " - ") << line;
    ASSERT_TRUE(t >= 0 && t < threads) << line;
    ASSERT_EQ(seq, next[static_cast<size_t>(t)]) << "thread " << t << " out of order or lost";
    ++next[static_cast<size_t>(t)];
  }
  for (long n : next) EXPECT_EQ(n, perThread);
}

}  // namespace test
}  // namespace muon
