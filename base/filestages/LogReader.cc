#include "muon/base/filestages/LogReader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <memory>

namespace muon {

namespace {

constexpr unsigned char kZstdMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};
constexpr size_t kPiece = 1 << 20;

bool startsWith(std::string_view s, const void* magic) {
  return s.size() >= 4 && std::memcmp(s.data(), magic, 4) == 0;
}

uint64_t get(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Decodes the zstd frames of `in`; `base` is in's offset in the file, for
// messages. Stops at the first frame that is cut or corrupt.
class ZstdReader {
 public:
  ZstdReader() : dctx_(ZSTD_createDCtx()), out_(kPiece, '\0') {}
  ~ZstdReader() { ZSTD_freeDCtx(dctx_); }
  ZstdReader(const ZstdReader&) = delete;
  ZstdReader& operator=(const ZstdReader&) = delete;

  LogReadResult frames(std::string_view in, uint64_t base, const LogTextSink& sink) {
    LogReadResult r;
    size_t pos = 0;
    while (pos < in.size()) {
      r.offset = base + pos;
      size_t frame = ZSTD_findFrameCompressedSize(in.data() + pos, in.size() - pos);
      if (ZSTD_isError(frame)) {
        return fail(r, std::string("zstd frame cut short or corrupt (") +
                           ZSTD_getErrorName(frame) + ")");
      }
      // Streamed out in pieces of kPiece: a frame's own claim of its size is
      // never trusted with an allocation.
      ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_only);
      ZSTD_inBuffer input{in.data() + pos, frame, 0};
      size_t left = 1;
      while (left != 0) {
        ZSTD_outBuffer output{&out_[0], out_.size(), 0};
        left = ZSTD_decompressStream(dctx_, &output, &input);
        if (ZSTD_isError(left)) {
          return fail(r, std::string("corrupt zstd frame: ") + ZSTD_getErrorName(left));
        }
        if (output.pos > 0) sink(std::string_view(out_.data(), output.pos));
        if (left != 0 && input.pos == input.size && output.pos < output.size) {
          return fail(r, "corrupt zstd frame: it ends early");
        }
      }
      pos += frame;
    }
    r.offset = base + in.size();
    return r;
  }

 private:
  static LogReadResult fail(LogReadResult r, const std::string& why) {
    r.ok = false;
    r.error = why;
    return r;
  }
  ZSTD_DCtx* dctx_;
  std::string out_;
};

LogReadResult readRecords(std::string_view in, const AesKey* key, const LogTextSink& sink,
                          const std::function<void(size_t)>& consumed) {
  LogReadResult r;
  if (!key) {
    r.ok = false;
    r.error = "the file is encrypted: give the key (--key-file)";
    return r;
  }
  ZstdReader zstd;
  std::string plain;
  uint64_t fileId = 0;
  size_t pos = 0;
  for (uint64_t index = 0; pos < in.size(); ++index) {
    r.offset = pos;
    auto fail = [&r](const std::string& why) {
      r.ok = false;
      r.error = why;
      return r;
    };
    size_t left = in.size() - pos;
    const char* header = in.data() + pos;
    if (left < AesGcmStage::kHeaderSize) return fail("record cut short (header)");
    if (std::memcmp(header, AesGcmStage::kMagic, 4) != 0) return fail("not a record (bad magic)");
    size_t n = static_cast<size_t>(get(header + 4, 4));
    if (left < AesGcmStage::kHeaderSize + n + AesGcmStage::kTagSize) return fail("record cut short");
    uint64_t id = get(header + 8, 8);
    uint64_t recordIndex = get(header + 16, 8);
    if (index == 0) fileId = id;
    if (id != fileId) return fail("a record of another file (spliced)");
    if (recordIndex != index) {
      return fail("record " + std::to_string(recordIndex) + " where " + std::to_string(index) +
                  " was expected (records removed, repeated or reordered)");
    }
    std::string error;
    size_t size = AesGcmStage::kHeaderSize + n + AesGcmStage::kTagSize;
    if (!AesGcmStage::open(*key, std::string_view(header, size), &plain, &error)) return fail(error);
    if (startsWith(plain, kZstdMagic)) {
      LogReadResult z = zstd.frames(plain, pos, sink);
      if (!z.ok) {
        z.offset = pos;  // the record's offset: frames inside have none of their own
        return z;
      }
    } else {
      sink(plain);
    }
    pos += size;
    consumed(pos);
  }
  r.offset = in.size();
  return r;
}

LogReadResult readAny(std::string_view bytes, const AesKey* key, const LogTextSink& sink,
                      const std::function<void(size_t)>& consumed) {
  if (startsWith(bytes, AesGcmStage::kMagic)) return readRecords(bytes, key, sink, consumed);
  if (startsWith(bytes, kZstdMagic)) {
    ZstdReader zstd;
    return zstd.frames(bytes, 0, sink);
  }
  for (size_t pos = 0; pos < bytes.size(); pos += kPiece) {
    sink(bytes.substr(pos, kPiece));
    consumed(std::min(bytes.size(), pos + kPiece));
  }
  LogReadResult r;
  r.offset = bytes.size();
  return r;
}

}  // namespace

LogReadResult readLogBytes(std::string_view bytes, const AesKey* key, const LogTextSink& sink) {
  return readAny(bytes, key, sink, [](size_t) {});
}

LogReadResult readLogFile(const std::string& path, const AesKey* key, const LogTextSink& sink) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    LogReadResult r;
    r.ok = false;
    r.error = std::string("cannot read: ") + std::strerror(errno);
    return r;
  }
  LogReadResult r = readLogFd(fd, key, sink);
  ::close(fd);
  return r;
}

LogReadResult readLogFd(int fd, const AesKey* key, const LogTextSink& sink) {
  LogReadResult r;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    r.ok = false;
    r.error = std::string("cannot read: ") + std::strerror(errno);
    return r;
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) return r;
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    r.ok = false;
    r.error = std::string("cannot map: ") + std::strerror(errno);
    return r;
  }
  auto* base = static_cast<char*>(map);
  size_t released = 0;
  // Pages read are dropped as we go: reading a 1 GB log keeps little resident.
  auto consumed = [&](size_t upTo) {
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_t end = upTo / page * page;
    if (end > released + (64u << 20)) {
      ::madvise(base + released, end - released, MADV_DONTNEED);
      released = end;
    }
  };
  r = readAny(std::string_view(base, size), key, sink, consumed);
  ::munmap(map, size);
  return r;
}

}  // namespace muon
