// libFuzzer target for LogReader (muon-logcat's reader of plain, .zst and
// .enc log files): whatever the bytes, it must not read outside them, and
// it must stop with an error and an offset inside them, or succeed at the end.
// The first input byte chooses whether the reader has the key the seeds
// were encrypted with (tests/fuzz/corpus/LogReader).
#include <cstdint>
#include <string>
#include <string_view>

#include "FuzzCheck.h"
#include "muon/base/filestages/LogReader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  muon::AesKey key;
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<unsigned char>(i);
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  uint64_t text = 0;
  muon::LogReadResult r = muon::readLogBytes(bytes, (data[0] & 1) ? &key : nullptr,
                                             [&text](std::string_view t) { text += t.size(); });
  FUZZ_CHECK(r.offset <= bytes.size());
  FUZZ_CHECK(r.ok == r.error.empty());
  if (r.ok) FUZZ_CHECK(r.offset == bytes.size());
  return 0;
}
