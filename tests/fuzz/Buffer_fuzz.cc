// libFuzzer target for muon::net::Buffer: the input is a sequence of
// operations (append, retrieve, prepend, readFd from a pipe, shrink, ...)
// run against a Buffer and a std::string model of its readable bytes.
// After every operation the readable bytes must equal the model; ASan catches
// any access outside the vector, and Buffer's own asserts (on in every build)
// catch broken indexes.
#include <fcntl.h>
#include <unistd.h>

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "FuzzCheck.h"
#include "muon/net/Buffer.h"

namespace {

using muon::net::Buffer;

void check(const Buffer& b, const std::string& model) {
  FUZZ_CHECK(b.readableBytes() == model.size());
  FUZZ_CHECK(b.toStringView() == model);
  FUZZ_CHECK(b.peek() + b.readableBytes() == b.beginWrite());
}

// One non-blocking pipe for the whole run: readFd is fed from it, and an
// empty pipe gives EAGAIN (the error path) instead of blocking.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) std::abort();
  }
};
Pipe& thePipe() {
  static Pipe p;
  return p;
}

void readFromPipe(Buffer& b, std::string& model, FuzzedDataProvider& in) {
  int rfd = thePipe().fds[0];
  int wfd = thePipe().fds[1];
  // Up to 70000 bytes: past the 64 KiB stack buffer readFd adds to the
  // writable space (the pipe takes at most its capacity, 64 KiB by default).
  size_t want = in.ConsumeIntegralInRange<size_t>(0, 70000);
  char byte = in.ConsumeIntegral<char>();
  std::string data(want, byte);
  for (size_t i = 0; i < data.size(); i += 97) data[i] = static_cast<char>(i);
  ssize_t put = data.empty() ? 0 : ::write(wfd, data.data(), data.size());
  if (put < 0) put = 0;
  size_t writable = b.writableBytes();
  int savedErrno = 0;
  ssize_t n = b.readFd(rfd, &savedErrno);
  if (put == 0) {
    FUZZ_CHECK(n == -1 && savedErrno == EAGAIN);
  } else {
    // One readv takes min(what is there, writable + 64 KiB).
    size_t expect = std::min(static_cast<size_t>(put), writable + 65536);
    FUZZ_CHECK(n == static_cast<ssize_t>(expect));
    model.append(data, 0, expect);
  }
  // Empty the pipe so the next read starts clean.
  char sink[4096];
  while (::read(rfd, sink, sizeof sink) > 0) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Buffer b(in.ConsumeIntegralInRange<size_t>(0, 2048));
  std::string model;
  while (in.remaining_bytes() > 0) {
    switch (in.ConsumeIntegralInRange<int>(0, 15)) {
      case 0: {
        std::string s = in.ConsumeRandomLengthString(in.ConsumeBool() ? 64 : 20000);
        b.append(s);
        model += s;
        break;
      }
      case 1: {
        size_t n = in.ConsumeIntegralInRange<size_t>(0, model.size());
        b.retrieve(n);
        model.erase(0, n);
        break;
      }
      case 2: {
        size_t n = in.ConsumeIntegralInRange<size_t>(0, model.size());
        std::string got = b.retrieveAsString(n);
        FUZZ_CHECK(got == model.substr(0, n));
        model.erase(0, n);
        break;
      }
      case 3:
        FUZZ_CHECK(b.retrieveAllAsString() == model);
        model.clear();
        break;
      case 4: {
        std::string s = in.ConsumeRandomLengthString(16);
        if (s.size() <= b.prependableBytes()) {
          b.prepend(s.data(), s.size());
          model.insert(0, s);
        }
        break;
      }
      case 5: {
        int32_t v = in.ConsumeIntegral<int32_t>();
        b.appendInt32(v);
        const char be[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                            static_cast<char>(v >> 8), static_cast<char>(v)};
        model.append(be, 4);
        break;
      }
      case 6:
        if (model.size() >= 8) {
          uint64_t want = 0;
          for (int i = 0; i < 8; ++i) want = want << 8 | static_cast<unsigned char>(model[static_cast<size_t>(i)]);
          FUZZ_CHECK(static_cast<uint64_t>(b.readInt64()) == want);
          model.erase(0, 8);
        }
        break;
      case 7:
        if (b.prependableBytes() >= 2) {
          int16_t v = in.ConsumeIntegral<int16_t>();
          b.prependInt16(v);
          const char be[2] = {static_cast<char>(v >> 8), static_cast<char>(v)};
          model.insert(0, be, 2);
        }
        break;
      case 8: {
        size_t reserve = in.ConsumeIntegralInRange<size_t>(0, 4096);
        b.shrink(reserve);
        FUZZ_CHECK(b.writableBytes() >= reserve);
        break;
      }
      case 9:
        readFromPipe(b, model, in);
        break;
      case 10: {
        size_t n = in.ConsumeIntegralInRange<size_t>(0, model.size());
        b.unwrite(n);
        model.resize(model.size() - n);
        break;
      }
      case 11: {
        const char* crlf = b.findCRLF();
        size_t at = model.find("\r\n");
        FUZZ_CHECK(at == std::string::npos ? crlf == nullptr : crlf == b.peek() + at);
        const char* eol = b.findEOL();
        at = model.find('\n');
        FUZZ_CHECK(at == std::string::npos ? eol == nullptr : eol == b.peek() + at);
        break;
      }
      case 12: {
        size_t n = in.ConsumeIntegralInRange<size_t>(0, 100000);
        b.ensureWritableBytes(n);
        FUZZ_CHECK(b.writableBytes() >= n);
        break;
      }
      case 13: {
        // A copy is an independent value; swapping exchanges contents.
        Buffer copy = b;
        check(copy, model);
        Buffer other;
        other.append("other");
        b.swap(other);
        check(b, "other");
        b.swap(other);
        copy.retrieveAll();
        break;
      }
      case 14:
        b.retrieveAll();
        model.clear();
        break;
      default: {
        // Write in place, as a codec does: ensure, fill, hasWritten.
        size_t n = in.ConsumeIntegralInRange<size_t>(0, 300);
        b.ensureWritableBytes(n);
        std::string s(n, 'w');
        std::memcpy(b.beginWrite(), s.data(), n);
        b.hasWritten(n);
        model += s;
        break;
      }
    }
    check(b, model);
  }
  return 0;
}
