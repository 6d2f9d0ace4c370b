// AesGcmStage: each chunk becomes one AES-256-GCM record (OpenSSL's
// libcrypto), so a log is unreadable at rest and any change to it is seen.
//
// A record (all integers little-endian):
//   "MLG1" | u32 n | u64 file id | u64 record index | n bytes of ciphertext | 16-byte tag
// The first 24 bytes are authenticated with the ciphertext. The nonce is the
// file id (random for every file) followed by the record index's low 32
// bits: it never repeats under one key while file ids differ (2^-64 per
// pair) and a file holds fewer than 2^32 records. A reader (LogReader.h)
// checks the magic, the length, that the file id never changes and that
// indexes count 0, 1, 2, ...: a tampered, truncated, reordered or spliced
// record is an error at its offset.
//
// Part of muon::filestages. One LogFile's thread calls it (FileStage.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "muon/base/FileStage.h"

namespace muon {

using AesKey = std::array<unsigned char, 32>;

// Reads a 256-bit key from `path`: 32 raw bytes, or 64 hexadecimal digits
// (a trailing newline allowed). Refuses, with a message in *error, a file
// that is missing, unreadable, not a regular file, readable or writable by
// others (as ssh does for its keys), or of the wrong length. The key is
// never logged, and the message never holds any of its bytes.
bool loadAesKey(const std::string& path, AesKey* key, std::string* error);

class AesGcmStage : public FileStage {
 public:
  static constexpr char kMagic[4] = {'M', 'L', 'G', '1'};
  static constexpr size_t kHeaderSize = 24;
  static constexpr size_t kTagSize = 16;

  explicit AesGcmStage(const AesKey& key);
  // nullptr, with the reason in *error, when the key file will not do.
  static std::shared_ptr<AesGcmStage> fromKeyFile(const std::string& path, std::string* error);
  ~AesGcmStage() override;
  AesGcmStage(const AesGcmStage&) = delete;
  AesGcmStage& operator=(const AesGcmStage&) = delete;

  const char* suffix() const override { return ".enc"; }
  void startFile() override;
  bool transform(std::string_view in, std::string* out, std::string* error) override;

  // Reader side: decrypts one whole record (header, ciphertext, tag; the
  // caller has checked its magic and length) into *plain. False with the
  // reason when the tag does not match.
  static bool open(const AesKey& key, std::string_view record, std::string* plain,
                   std::string* error);

 private:
  AesKey key_;
  uint64_t fileId_ = 0;
  uint64_t index_ = 0;
};

}  // namespace muon
