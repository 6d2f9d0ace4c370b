// The files of one benchmark run: a fresh directory, the warm-up before the
// clock starts, and the count of message lines read back after it stops.
// Shared by logbench and log_matrix. Internal to the benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "muon/base/filestages/AesGcmStage.h"

namespace logbench {

// mkdtemp(templ) ("/tmp/x.XXXXXX"); exits with a message if it fails.
std::string makeTempDir(const std::string& templ);

// Writes and deletes a file of `bytes` in `dir`, untimed, so that every run
// meets the same machine: a VM that hands idle memory back to its host
// writes the first few hundred MB after a pause much slower
// (docs/logging-bench.md).
void warmUp(const std::string& dir, uint64_t bytes);

// Bytes on disk and complete lines containing `marker` in every regular file
// of `dir` (symbolic links skipped); .zst and .enc files are decoded with
// `key` (null: none). A last line without '\n' was cut short and is not
// counted, and lines a logger adds of its own (muon's drop report, glog's
// header) lack the marker. False, with a message on stderr, if a file cannot
// be read.
bool scanLogFiles(const std::string& dir, std::string_view marker, const muon::AesKey* key,
                  uint64_t* bytes, uint64_t* lines);

}  // namespace logbench
