#include "muon/net/Buffer.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>

namespace muon {
namespace net {

const char* Buffer::findCRLF(const char* start) const {
  assert(peek() <= start && start <= beginWrite());
  static constexpr char kCRLF[] = "\r\n";
  const char* crlf = std::search(start, beginWrite(), kCRLF, kCRLF + 2);
  return crlf == beginWrite() ? nullptr : crlf;
}

const char* Buffer::findEOL(const char* start) const {
  assert(peek() <= start && start <= beginWrite());
  const void* eol = std::memchr(start, '\n', static_cast<size_t>(beginWrite() - start));
  return static_cast<const char*>(eol);
}

void Buffer::makeSpace(size_t len) {
  if (writableBytes() + prependableBytes() < len + kCheapPrepend) {
    // Not enough even after moving the data to the front: grow.
    buffer_.resize(writerIndex_ + len);
  } else {
    // Enough room in total: slide the readable bytes back to the front
    // instead of allocating.
    size_t readable = readableBytes();
    std::memmove(begin() + kCheapPrepend, begin() + readerIndex_, readable);
    readerIndex_ = kCheapPrepend;
    writerIndex_ = readerIndex_ + readable;
  }
}

void Buffer::shrink(size_t reserve) {
  size_t readable = readableBytes();
  std::vector<char> fresh(kCheapPrepend + readable + reserve);
  std::memcpy(fresh.data() + kCheapPrepend, peek(), readable);
  buffer_.swap(fresh);
  readerIndex_ = kCheapPrepend;
  writerIndex_ = kCheapPrepend + readable;
}

ssize_t Buffer::readFd(int fd, int* savedErrno) { return readInto(fd, savedErrno, false); }

ssize_t Buffer::readSocket(int fd, int* savedErrno) { return readInto(fd, savedErrno, true); }

ssize_t Buffer::readInto(int fd, int* savedErrno, bool isSocket) {
  // 64 KiB on the stack: with the writable part of the buffer, one readv
  // takes in up to 64 KiB + writable bytes; only what overflows into
  // `extra` is copied (and the buffer grown) afterwards.
  char extra[65536];
  const size_t writable = writableBytes();
  struct iovec vec[2];
  vec[0].iov_base = beginWrite();
  vec[0].iov_len = writable;
  vec[1].iov_base = extra;
  vec[1].iov_len = sizeof extra;
  // When the buffer already has 64 KiB free, it alone is enough.
  const bool alone = writable >= sizeof extra;
  ssize_t n;
  do {
    if (alone && isSocket) {
      n = ::recv(fd, vec[0].iov_base, writable, 0);
    } else {
      n = ::readv(fd, vec, alone ? 1 : 2);
    }
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    *savedErrno = errno;
  } else if (static_cast<size_t>(n) <= writable) {
    writerIndex_ += static_cast<size_t>(n);
  } else {
    writerIndex_ = buffer_.size();
    append(extra, static_cast<size_t>(n) - writable);
  }
  return n;
}

}  // namespace net
}  // namespace muon
