// Buffer: the byte queue behind every TcpConnection's input and output.
//
//   +-------------------+------------------+------------------+
//   | prependable bytes |  readable bytes  |  writable bytes  |
//   |                   |     (CONTENT)    |                  |
//   +-------------------+------------------+------------------+
//   0      <=      readerIndex   <=   writerIndex    <=     size
//
// kCheapPrepend bytes stay free in front so a length header can be put
// before a message without moving it. Not thread-safe: a connection's
// buffers belong to its loop thread.
#pragma once

#include <endian.h>
#include <sys/types.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace muon {
namespace net {

class Buffer {
 public:
  static constexpr size_t kCheapPrepend = 8;
  static constexpr size_t kInitialSize = 1024;

  explicit Buffer(size_t initialSize = kInitialSize)
      : buffer_(kCheapPrepend + initialSize), readerIndex_(kCheapPrepend), writerIndex_(kCheapPrepend) {}

  // Copyable and movable: a Buffer is a value.
  void swap(Buffer& rhs) noexcept {
    buffer_.swap(rhs.buffer_);
    std::swap(readerIndex_, rhs.readerIndex_);
    std::swap(writerIndex_, rhs.writerIndex_);
  }

  size_t readableBytes() const { return writerIndex_ - readerIndex_; }
  size_t writableBytes() const { return buffer_.size() - writerIndex_; }
  size_t prependableBytes() const { return readerIndex_; }

  const char* peek() const { return begin() + readerIndex_; }
  std::string_view toStringView() const { return std::string_view(peek(), readableBytes()); }

  // The first "\r\n" at or after `start` (default: peek()), or nullptr.
  const char* findCRLF() const { return findCRLF(peek()); }
  const char* findCRLF(const char* start) const;
  // The first '\n' at or after `start` (default: peek()), or nullptr.
  const char* findEOL() const { return findEOL(peek()); }
  const char* findEOL(const char* start) const;

  void retrieve(size_t len) {
    assert(len <= readableBytes());
    if (len < readableBytes()) {
      readerIndex_ += len;
    } else {
      retrieveAll();
    }
  }
  void retrieveUntil(const char* end) {
    assert(peek() <= end && end <= beginWrite());
    retrieve(static_cast<size_t>(end - peek()));
  }
  void retrieveInt64() { retrieve(sizeof(int64_t)); }
  void retrieveInt32() { retrieve(sizeof(int32_t)); }
  void retrieveInt16() { retrieve(sizeof(int16_t)); }
  void retrieveInt8() { retrieve(sizeof(int8_t)); }
  // Empty again; both indexes go back to the start so the space is reused.
  void retrieveAll() {
    readerIndex_ = kCheapPrepend;
    writerIndex_ = kCheapPrepend;
  }
  std::string retrieveAllAsString() { return retrieveAsString(readableBytes()); }
  std::string retrieveAsString(size_t len) {
    assert(len <= readableBytes());
    std::string result(peek(), len);
    retrieve(len);
    return result;
  }

  void append(std::string_view data) { append(data.data(), data.size()); }
  void append(const void* data, size_t len) {
    ensureWritableBytes(len);
    if (len > 0) std::memcpy(beginWrite(), data, len);
    hasWritten(len);
  }
  void ensureWritableBytes(size_t len) {
    if (writableBytes() < len) makeSpace(len);
    assert(writableBytes() >= len);
  }
  char* beginWrite() { return begin() + writerIndex_; }
  const char* beginWrite() const { return begin() + writerIndex_; }
  void hasWritten(size_t len) {
    assert(len <= writableBytes());
    writerIndex_ += len;
  }
  void unwrite(size_t len) {
    assert(len <= readableBytes());
    writerIndex_ -= len;
  }

  // Integers travel in network byte order (big-endian).
  void appendInt64(int64_t x) { appendBigEndian(htobe64(static_cast<uint64_t>(x))); }
  void appendInt32(int32_t x) { appendBigEndian(htobe32(static_cast<uint32_t>(x))); }
  void appendInt16(int16_t x) { appendBigEndian(htobe16(static_cast<uint16_t>(x))); }
  void appendInt8(int8_t x) { append(&x, sizeof x); }

  int64_t peekInt64() const { return static_cast<int64_t>(be64toh(peekRaw<uint64_t>())); }
  int32_t peekInt32() const { return static_cast<int32_t>(be32toh(peekRaw<uint32_t>())); }
  int16_t peekInt16() const { return static_cast<int16_t>(be16toh(peekRaw<uint16_t>())); }
  int8_t peekInt8() const { return peekRaw<int8_t>(); }

  int64_t readInt64() { int64_t x = peekInt64(); retrieveInt64(); return x; }
  int32_t readInt32() { int32_t x = peekInt32(); retrieveInt32(); return x; }
  int16_t readInt16() { int16_t x = peekInt16(); retrieveInt16(); return x; }
  int8_t readInt8() { int8_t x = peekInt8(); retrieveInt8(); return x; }

  void prependInt64(int64_t x) { prependBigEndian(htobe64(static_cast<uint64_t>(x))); }
  void prependInt32(int32_t x) { prependBigEndian(htobe32(static_cast<uint32_t>(x))); }
  void prependInt16(int16_t x) { prependBigEndian(htobe16(static_cast<uint16_t>(x))); }
  void prependInt8(int8_t x) { prepend(&x, sizeof x); }
  void prepend(const void* data, size_t len) {
    assert(len <= prependableBytes());
    readerIndex_ -= len;
    std::memcpy(begin() + readerIndex_, data, len);
  }

  // Gives memory back: keeps the readable bytes and `reserve` writable ones.
  void shrink(size_t reserve);
  size_t internalCapacity() const { return buffer_.capacity(); }

  // Reads what fd has into the buffer, with one readv: the writable space
  // plus a 64 KiB stack buffer, so a big read costs one system call and an
  // idle connection does not hold a big buffer. Returns what read(2) returns;
  // on -1, *savedErrno is errno (EINTR is retried here).
  ssize_t readFd(int fd, int* savedErrno);
  // readFd for a socket: the same, except that when the writable space is
  // 64 KiB or more the read is one recv(2), a shorter way through the kernel
  // than readv(2).
  ssize_t readSocket(int fd, int* savedErrno);

 private:
  char* begin() { return buffer_.data(); }
  const char* begin() const { return buffer_.data(); }

  template <typename T>
  void appendBigEndian(T bigEndian) { append(&bigEndian, sizeof bigEndian); }
  template <typename T>
  void prependBigEndian(T bigEndian) { prepend(&bigEndian, sizeof bigEndian); }
  template <typename T>
  T peekRaw() const {
    assert(readableBytes() >= sizeof(T));
    T x;
    std::memcpy(&x, peek(), sizeof x);
    return x;
  }

  void makeSpace(size_t len);
  ssize_t readInto(int fd, int* savedErrno, bool isSocket);

  std::vector<char> buffer_;
  size_t readerIndex_;
  size_t writerIndex_;
};

}  // namespace net
}  // namespace muon
