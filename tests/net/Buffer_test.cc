#include "muon/net/Buffer.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "NetTestUtil.h"

using muon::net::Buffer;

TEST(Buffer, RetrieveMovesTheReaderAndRetrievingAllResetsBothIndices) {
  Buffer buf;
  EXPECT_EQ(buf.readableBytes(), 0u);
  EXPECT_EQ(buf.writableBytes(), Buffer::kInitialSize);
  EXPECT_EQ(buf.prependableBytes(), Buffer::kCheapPrepend);

  const std::string str(200, 'x');
  buf.append(str);
  EXPECT_EQ(buf.readableBytes(), str.size());
  EXPECT_EQ(buf.writableBytes(), Buffer::kInitialSize - str.size());

  const std::string str2 = buf.retrieveAsString(50);
  EXPECT_EQ(str2, std::string(50, 'x'));
  EXPECT_EQ(buf.readableBytes(), 150u);
  EXPECT_EQ(buf.prependableBytes(), Buffer::kCheapPrepend + 50);

  buf.append(str);
  EXPECT_EQ(buf.readableBytes(), 350u);
  EXPECT_EQ(buf.retrieveAllAsString(), std::string(350, 'x'));
  EXPECT_EQ(buf.readableBytes(), 0u);
  EXPECT_EQ(buf.prependableBytes(), Buffer::kCheapPrepend);
}

TEST(Buffer, GrowsAndKeepsContent) {
  Buffer buf;
  buf.append(std::string(400, 'y'));
  buf.retrieve(50);
  buf.append(std::string(1000, 'z'));
  EXPECT_EQ(buf.readableBytes(), 1350u);
  EXPECT_EQ(buf.retrieveAllAsString(), std::string(350, 'y') + std::string(1000, 'z'));
}

TEST(Buffer, MovesInsteadOfGrowingWhenThereIsRoom) {
  Buffer buf;
  buf.append(std::string(800, 'y'));
  buf.retrieve(500);
  size_t capacity = buf.internalCapacity();
  buf.append(std::string(300, 'z'));
  EXPECT_EQ(buf.internalCapacity(), capacity);
  EXPECT_EQ(buf.prependableBytes(), Buffer::kCheapPrepend);
  EXPECT_EQ(buf.retrieveAllAsString(), std::string(300, 'y') + std::string(300, 'z'));
}

TEST(Buffer, ShrinkKeepsReadable) {
  Buffer buf;
  buf.append(std::string(2000, 'y'));
  buf.retrieve(1500);
  buf.shrink(0);
  EXPECT_EQ(buf.readableBytes(), 500u);
  EXPECT_EQ(buf.writableBytes(), 0u);
  EXPECT_LE(buf.internalCapacity(), 2000u);
  EXPECT_EQ(buf.retrieveAllAsString(), std::string(500, 'y'));
}

TEST(Buffer, PrependInt32TakesFourBytesOfTheCheapPrependInNetworkOrder) {
  Buffer buf;
  buf.append(std::string(200, 'y'));
  int32_t len = 200;
  buf.prependInt32(len);
  EXPECT_EQ(buf.readableBytes(), 204u);
  EXPECT_EQ(buf.prependableBytes(), Buffer::kCheapPrepend - 4);
  EXPECT_EQ(buf.readInt32(), 200);
  EXPECT_EQ(buf.retrieveAllAsString(), std::string(200, 'y'));
}

TEST(Buffer, IntegersInNetworkOrder) {
  Buffer buf;
  buf.appendInt8(-2);
  buf.appendInt16(0x1234);
  buf.appendInt32(-123456789);
  buf.appendInt64(0x0102030405060708LL);
  EXPECT_EQ(buf.readableBytes(), 1u + 2 + 4 + 8);
  // Big-endian on the wire.
  EXPECT_EQ(static_cast<unsigned char>(buf.peek()[1]), 0x12);
  EXPECT_EQ(static_cast<unsigned char>(buf.peek()[2]), 0x34);
  EXPECT_EQ(static_cast<unsigned char>(buf.peek()[7]), 0x01);
  EXPECT_EQ(static_cast<unsigned char>(buf.peek()[14]), 0x08);
  EXPECT_EQ(buf.peekInt8(), -2);
  EXPECT_EQ(buf.readInt8(), -2);
  EXPECT_EQ(buf.readInt16(), 0x1234);
  EXPECT_EQ(buf.readInt32(), -123456789);
  EXPECT_EQ(buf.readInt64(), 0x0102030405060708LL);
  EXPECT_EQ(buf.readableBytes(), 0u);
}

// Every width: append, peek (which leaves the bytes), read (which takes
// them), and prepend in front of a message.
TEST(Buffer, EveryIntegerWidthPeeksReadsAndPrepends) {
  Buffer buf;
  buf.appendInt8(INT8_MIN);
  buf.appendInt16(INT16_MIN);
  buf.appendInt32(INT32_MIN);
  buf.appendInt64(INT64_MIN);
  EXPECT_EQ(static_cast<unsigned char>(buf.peek()[0]), 0x80);
  EXPECT_EQ(static_cast<unsigned char>(buf.peek()[1]), 0x80);  // high byte first
  EXPECT_EQ(static_cast<unsigned char>(buf.peek()[2]), 0x00);
  EXPECT_EQ(buf.peekInt8(), INT8_MIN);
  EXPECT_EQ(buf.peekInt8(), INT8_MIN);  // peek does not consume
  EXPECT_EQ(buf.readableBytes(), 15u);
  EXPECT_EQ(buf.readInt8(), INT8_MIN);
  EXPECT_EQ(buf.peekInt16(), INT16_MIN);
  EXPECT_EQ(buf.readableBytes(), 14u);
  EXPECT_EQ(buf.readInt16(), INT16_MIN);
  EXPECT_EQ(buf.peekInt32(), INT32_MIN);
  EXPECT_EQ(buf.readableBytes(), 12u);
  EXPECT_EQ(buf.readInt32(), INT32_MIN);
  EXPECT_EQ(buf.peekInt64(), INT64_MIN);
  EXPECT_EQ(buf.readableBytes(), 8u);
  EXPECT_EQ(buf.readInt64(), INT64_MIN);
  EXPECT_EQ(buf.readableBytes(), 0u);

  // Prepends fill the 8 cheap bytes from the back: 1 + 2 + 4 fit, then 8
  // more do not, so the 64-bit one goes into a fresh buffer.
  buf.append("body");
  buf.prependInt32(0x01020304);
  buf.prependInt16(0x0506);
  buf.prependInt8(0x07);
  EXPECT_EQ(buf.prependableBytes(), Buffer::kCheapPrepend - 7);
  EXPECT_EQ(buf.readInt8(), 0x07);
  EXPECT_EQ(buf.readInt16(), 0x0506);
  EXPECT_EQ(buf.readInt32(), 0x01020304);
  EXPECT_EQ(buf.retrieveAllAsString(), "body");
  Buffer framed;
  framed.append("x");
  framed.prependInt64(0x0102030405060708LL);
  EXPECT_EQ(framed.prependableBytes(), 0u);
  EXPECT_EQ(static_cast<unsigned char>(framed.peek()[0]), 0x01);
  EXPECT_EQ(framed.readInt64(), 0x0102030405060708LL);
  EXPECT_EQ(framed.retrieveAllAsString(), "x");
}

TEST(Buffer, ShrinkKeepsTheReserve) {
  Buffer buf;
  buf.append(std::string(100000, 'a'));
  buf.retrieve(99000);
  buf.shrink(100);
  EXPECT_EQ(buf.readableBytes(), 1000u);
  EXPECT_EQ(buf.writableBytes(), 100u);
  EXPECT_EQ(buf.prependableBytes(), Buffer::kCheapPrepend);
  EXPECT_LT(buf.internalCapacity(), 2000u);
  buf.append(std::string(100, 'b'));  // fits in the reserve
  EXPECT_EQ(buf.retrieveAllAsString(), std::string(1000, 'a') + std::string(100, 'b'));
}

TEST(Buffer, FindCRLFAndEOL) {
  Buffer buf;
  buf.append("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const char* crlf = buf.findCRLF();
  ASSERT_NE(crlf, nullptr);
  EXPECT_EQ(crlf - buf.peek(), 14);
  const char* second = buf.findCRLF(crlf + 2);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second - buf.peek(), 23);
  EXPECT_EQ(buf.findEOL() - buf.peek(), 15);
  buf.retrieveUntil(crlf + 2);
  EXPECT_EQ(buf.toStringView().substr(0, 4), "Host");

  Buffer none;
  none.append("no line end");
  EXPECT_EQ(none.findCRLF(), nullptr);
  EXPECT_EQ(none.findEOL(), nullptr);
}

// What readFd and readSocket both promise, given `data` waiting at rfd
// (non-blocking) and wfd, its writing end: one call takes the buffer's
// writable space and the 64 KiB stack extra, further calls the rest in
// order, then EAGAIN, then 0 once wfd is closed.
void expectReadsEverything(int rfd, int wfd, const std::string& data,
                           ssize_t (Buffer::*read)(int, int*)) {
  Buffer buf;
  int savedErrno = 0;
  ssize_t n = (buf.*read)(rfd, &savedErrno);
  EXPECT_EQ(n, static_cast<ssize_t>(Buffer::kInitialSize + 65536));
  EXPECT_EQ(buf.readableBytes(), static_cast<size_t>(n));
  while (buf.readableBytes() < data.size()) {
    ASSERT_GT((buf.*read)(rfd, &savedErrno), 0);
  }
  EXPECT_EQ(buf.retrieveAllAsString(), data);
  EXPECT_EQ((buf.*read)(rfd, &savedErrno), -1);
  EXPECT_EQ(savedErrno, EAGAIN);
  ::close(wfd);
  EXPECT_EQ((buf.*read)(rfd, &savedErrno), 0);
  ::close(rfd);
}

// A connected pair of non-blocking UNIX stream sockets, with `data` sent
// from fds[1] and waiting at fds[0].
void socketPairHolding(int fds[2], const std::string& data) {
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
  int sendBuffer = 1 << 20;
  ASSERT_EQ(::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &sendBuffer, sizeof sendBuffer), 0);
  ASSERT_EQ(::send(fds[1], data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
}

TEST(Buffer, ReadFdTakesMoreThanWritableInOneCall) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  ASSERT_GT(::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20), 0);
  const std::string data = muon::net::test::makePattern(200000);
  ASSERT_EQ(::write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  expectReadsEverything(fds[0], fds[1], data, &Buffer::readFd);
}

TEST(Buffer, ReadSocketTakesMoreThanWritableInOneCall) {
  int fds[2];
  const std::string data = muon::net::test::makePattern(150000);
  socketPairHolding(fds, data);
  expectReadsEverything(fds[0], fds[1], data, &Buffer::readSocket);
}

// With 64 KiB or more writable, readSocket reads with recv(2) alone: one
// call still fills all of it.
TEST(Buffer, ReadSocketFillsALargeBufferInOneCall) {
  int fds[2];
  const std::string data = muon::net::test::makePattern(150000);
  socketPairHolding(fds, data);
  Buffer buf(128 * 1024);
  int savedErrno = 0;
  EXPECT_EQ(buf.readSocket(fds[0], &savedErrno), 128 * 1024);
  ASSERT_GT(buf.readSocket(fds[0], &savedErrno), 0);
  EXPECT_EQ(buf.retrieveAllAsString(), data);
  ::close(fds[0]);
  ::close(fds[1]);
}
