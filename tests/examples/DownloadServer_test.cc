// download_server: a 64 MiB file reaches a slow reader whole and in order,
// while the server's output buffer stays under the high-water mark plus one
// chunk (the server logs its peak at close).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "NetTestUtil.h"
#include "TempDir.h"

using namespace muon::net::test;
using muon::test::ChildProgram;
using muon::test::TempDir;

namespace {

constexpr size_t kFileSize = 64 << 20;
constexpr size_t kPiece = 1 << 20;  // the file is 64 copies of one pattern piece
constexpr size_t kHighWaterKiB = 256;
constexpr size_t kChunk = 64 * 1024;  // download_server's read size

// The number logged in "peak output buffer N bytes", or -1.
long peakOf(const std::string& output) {
  const std::string marker = "peak output buffer ";
  const size_t at = output.find(marker);
  return at == std::string::npos ? -1 : std::atol(output.c_str() + at + marker.size());
}

}  // namespace

TEST(DownloadServer, SlowReaderGetsTheWholeFileWithBoundedBuffering) {
  TempDir dir;
  const std::string file = dir.file("64MiB");
  const std::string piece = makePattern(kPiece, 3);
  {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    for (size_t i = 0; i < kFileSize / kPiece; ++i) {
      ASSERT_EQ(::write(fd, piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
    }
    ::close(fd);
  }
  ChildProgram server("download_server", {"0", file, std::to_string(kHighWaterKiB)});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  const int fd = connectTo(loopback(port));
  ASSERT_GE(fd, 0);
  // Slow: nothing read until the server says its output buffer reached the
  // mark (the socket buffers are full by then); then small reads.
  ASSERT_TRUE(server.waitForOutput("slow reader, waiting for write-complete")) << server.output();
  std::string got(kPiece, '\0');
  for (size_t i = 0; i < kFileSize / kPiece; ++i) {
    for (size_t off = 0; off < kPiece; off += 16384) {
      ASSERT_TRUE(readExactly(fd, got.data() + off, 16384)) << "at " << i * kPiece + off;
    }
    ASSERT_TRUE(got == piece) << "piece " << i << " differs";
  }
  EXPECT_TRUE(readsEof(fd));
  ::close(fd);
  ASSERT_TRUE(server.stopsCleanly());
  EXPECT_EQ(server.count(" sent 67108864 bytes"), 1u) << server.output();
  const long peak = peakOf(server.output());
  EXPECT_LT(peak, static_cast<long>(kHighWaterKiB * 1024 + kChunk)) << server.output();
  EXPECT_GE(peak, static_cast<long>(kHighWaterKiB * 1024)) << server.output();
}

TEST(DownloadServer, AMissingFileClosesTheConnection) {
  TempDir dir;
  ChildProgram server("download_server", {"0", dir.file("absent")});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  const int fd = connectTo(loopback(port));
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(readsEof(fd));
  ::close(fd);
  EXPECT_TRUE(server.stopsCleanly());
}
