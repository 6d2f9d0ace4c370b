#include "muon/base/filestages/AesGcmStage.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>

namespace muon {

namespace {

void put32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
void put64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint64_t get(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// 12-byte nonce: the file id, then the index's low 32 bits.
void nonceOf(const char* header, unsigned char nonce[12]) {
  std::memcpy(nonce, header + 8, 8);
  std::memcpy(nonce + 8, header + 16, 4);
}

struct CipherContext {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  ~CipherContext() { EVP_CIPHER_CTX_free(ctx); }
};

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool loadAesKey(const std::string& path, AesKey* key, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    *error = "key file '" + path + "': " + std::strerror(errno);
    return false;
  }
  struct stat st;
  std::string text;
  bool ok = ::fstat(fd, &st) == 0;
  if (!ok) {
    *error = "key file '" + path + "': " + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    *error = "key file '" + path + "' is not a regular file";
    ok = false;
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    *error = "key file '" + path + "' is accessible by others (mode " + mode +
             "): chmod 600 it";
    ok = false;
  } else {
    char buf[130];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      *error = "key file '" + path + "': " + std::strerror(errno);
      ok = false;
    } else {
      text.assign(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  if (!ok) return false;
  if (text.size() == key->size()) {
    std::memcpy(key->data(), text.data(), key->size());
    return true;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  bool hex = text.size() == 2 * key->size();
  for (size_t i = 0; hex && i < key->size(); ++i) {
    int hi = hexDigit(text[2 * i]), lo = hexDigit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      hex = false;
    } else {
      (*key)[i] = static_cast<unsigned char>(hi * 16 + lo);
    }
  }
  if (!hex) {
    *error = "key file '" + path + "' must hold a 256-bit key: 32 bytes, or 64 hexadecimal digits";
    key->fill(0);
    return false;
  }
  return true;
}

AesGcmStage::AesGcmStage(const AesKey& key) : key_(key) { startFile(); }

AesGcmStage::~AesGcmStage() { key_.fill(0); }

std::shared_ptr<AesGcmStage> AesGcmStage::fromKeyFile(const std::string& path, std::string* error) {
  AesKey key;
  if (!loadAesKey(path, &key, error)) return nullptr;
  auto stage = std::make_shared<AesGcmStage>(key);
  key.fill(0);
  return stage;
}

void AesGcmStage::startFile() {
  if (::getrandom(&fileId_, sizeof fileId_, 0) != static_cast<ssize_t>(sizeof fileId_)) {
    // No entropy source: the time and address still differ between files.
    fileId_ = static_cast<uint64_t>(::time(nullptr)) * 0x9E3779B97F4A7C15ull ^
              reinterpret_cast<uintptr_t>(this) ^ (fileId_ + 1);
  }
  index_ = 0;
}

bool AesGcmStage::transform(std::string_view in, std::string* out, std::string* error) {
  if (in.size() > 0x7fffffff || index_ > 0xffffffffu) {
    *error = in.size() > 0x7fffffff ? "chunk too large for one record" : "too many records in one file";
    return false;
  }
  size_t start = out->size();
  out->resize(start + kHeaderSize + in.size() + kTagSize);
  char* header = &(*out)[start];
  std::memcpy(header, kMagic, 4);
  put32(header + 4, static_cast<uint32_t>(in.size()));
  put64(header + 8, fileId_);
  put64(header + 16, index_);
  unsigned char nonce[12];
  nonceOf(header, nonce);
  auto* cipher = reinterpret_cast<unsigned char*>(header + kHeaderSize);
  CipherContext c;
  int len = 0, finalLen = 0;
  bool ok = c.ctx && EVP_EncryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) == 1 &&
            EVP_EncryptInit_ex(c.ctx, nullptr, nullptr, key_.data(), nonce) == 1 &&
            EVP_EncryptUpdate(c.ctx, nullptr, &len, reinterpret_cast<unsigned char*>(header),
                              static_cast<int>(kHeaderSize)) == 1 &&
            EVP_EncryptUpdate(c.ctx, cipher, &len, reinterpret_cast<const unsigned char*>(in.data()),
                              static_cast<int>(in.size())) == 1 &&
            EVP_EncryptFinal_ex(c.ctx, cipher + len, &finalLen) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagSize),
                                cipher + in.size()) == 1;
  if (!ok) {
    out->resize(start);
    *error = "AES-256-GCM encryption failed";
    return false;
  }
  ++index_;
  return true;
}

bool AesGcmStage::open(const AesKey& key, std::string_view record, std::string* plain,
                       std::string* error) {
  const size_t n = static_cast<size_t>(get(record.data() + 4, 4));
  const char* header = record.data();
  unsigned char nonce[12];
  nonceOf(header, nonce);
  plain->resize(n);
  CipherContext c;
  int len = 0, finalLen = 0;
  auto* tag = const_cast<char*>(record.data() + kHeaderSize + n);
  bool ok = c.ctx && EVP_DecryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) == 1 &&
            EVP_DecryptInit_ex(c.ctx, nullptr, nullptr, key.data(), nonce) == 1 &&
            EVP_DecryptUpdate(c.ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(header),
                              static_cast<int>(kHeaderSize)) == 1 &&
            EVP_DecryptUpdate(c.ctx, reinterpret_cast<unsigned char*>(&(*plain)[0]), &len,
                              reinterpret_cast<const unsigned char*>(header + kHeaderSize),
                              static_cast<int>(n)) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagSize), tag) == 1 &&
            EVP_DecryptFinal_ex(c.ctx, reinterpret_cast<unsigned char*>(&(*plain)[0]) + len,
                                &finalLen) == 1;
  if (!ok) {
    plain->clear();
    *error = "authentication failed (wrong key, or the record was changed)";
  }
  return ok;
}

}  // namespace muon
