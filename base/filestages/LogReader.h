// LogReader: reads a log file back as muon wrote it: plain text, zstd frames
// (.zst), AES-GCM records (.enc), or records holding zstd frames (.zst.enc).
// The kind is told from the first bytes, not from the name. muon-logcat and
// logbench use it; part of muon::filestages.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "muon/base/filestages/AesGcmStage.h"

namespace muon {

struct LogReadResult {
  bool ok = true;
  uint64_t offset = 0;  // where reading stopped: the end when ok, else the bad record's start
  std::string error;    // why it stopped, when !ok
};

using LogTextSink = std::function<void(std::string_view text)>;

// Hands the file's text to `sink`, piece by piece, in order, up to the
// first frame or record that is cut short, corrupt, out of order, from
// another file or fails authentication. `key` may be null: an encrypted file
// is then an error at offset 0. The file is mapped, and what was read is
// given back as it goes, so a large file costs little memory.
LogReadResult readLogFile(const std::string& path, const AesKey* key, const LogTextSink& sink);

// The same for the file open on `fd` (read from its start whatever the fd's
// offset; not closed): a file that has been deleted since it was opened can
// still be read to its end.
LogReadResult readLogFd(int fd, const AesKey* key, const LogTextSink& sink);

// The same over bytes in memory.
LogReadResult readLogBytes(std::string_view bytes, const AesKey* key, const LogTextSink& sink);

}  // namespace muon
