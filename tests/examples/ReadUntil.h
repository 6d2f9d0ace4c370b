// Blocking reads the tests of the examples share, beside NetTestUtil.h's
// readExactly: to the end of the stream, and one "\r\n" line.
#pragma once

#include <unistd.h>

#include <string>

#include "NetTestUtil.h"

namespace muon {
namespace net {
namespace test {

// Everything until EOF; "<no EOF>" is appended if the server leaves the
// connection open (20 s without a byte), so a missing close fails a test.
inline std::string readUntilEof(int fd) {
  std::string all;
  char buf[4096];
  for (;;) {
    if (!waitReadable(fd, 20000)) return all + "<no EOF>";
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return all;
    all.append(buf, static_cast<size_t>(n));
  }
}

// The next line, without its "\r\n"; "<none>" on EOF or after 20 s.
inline std::string readCrlfLine(int fd) {
  std::string line;
  char c;
  while (readExactly(fd, &c, 1)) {
    line += c;
    if (line.size() >= 2 && line.compare(line.size() - 2, 2, "\r\n") == 0) {
      return line.substr(0, line.size() - 2);
    }
  }
  return "<none>";
}

}  // namespace test
}  // namespace net
}  // namespace muon
