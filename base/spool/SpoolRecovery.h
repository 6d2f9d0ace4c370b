// SpoolRecovery: writes out what a dead process left in its spool.
//
// A crash-safe AsyncLogging, as it is constructed, has LogSpool::open() call
// recoverDeadSpools() for its basename, and muon-recover calls
// recoverSpool() for every spool in a directory. A spool whose lock a live
// process holds is never touched. For a dead one, recovery first reports
// the drops the dead process had not reported (kDrop), in one line of the
// backend's form (LineLayout.h, dropReport)
//   Dropped log messages at TIME, N larger buffers (M messages); pid P
//   died before reporting them (recovered)
// then writes, in the order the buffers became current, one line
//   Recovered N lines of pid P from SPOOL at TIME[; M incomplete lines left out]
// and every line the dead process had committed and not written, each
// thread's lines in order, and marks each buffer free in the spool as soon
// as it is written. A buffer or report the dead process (or a dead
// recovery) was writing is first cut out of the file it was going to (that
// file is cut back to its size before the write), so each line and each
// drop report lands exactly once however often recovery is killed and run
// again, and from whatever working directory (a relative path in the spool
// names a file in the spool's directory, where the writer's log files are).
// The spool is removed when everything in it is written.
//
// Not thread-safe: one caller at a time per output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "muon/base/FileUtil.h"

namespace muon {

class LogFile;

// What a spool holds, read from its bytes alone. Kept apart from the file
// handling so that arbitrary bytes can be fed to it (tests/fuzz).
struct SpoolContents {
  struct Range {
    uint64_t offset;
    uint64_t length;
    bool recorded;  // a recorded line (SpoolFormat.h), formatted when written
  };
  struct Buffer {
    size_t slot = 0;
    uint64_t sequence = 0;
    bool writing = false;   // the dead process was writing it, at writtenAt
    FilePosition writtenAt;
    std::vector<Range> lines;  // in the buffer, in order
    uint64_t incomplete = 0;   // messages whose copy the kill cut short (or undecodable)
  };
  struct Drops {
    uint64_t buffers = 0;
    uint64_t messages = 0;
  };
  long pid = 0;
  std::vector<Buffer> buffers;  // those with anything to recover, oldest first
  // Dropped and not in a log file: a report the dead process was writing
  // (reportWriting, at reportAt) does not count as written.
  Drops unreported;
  bool reportWriting = false;
  FilePosition reportAt;
};

// Reads a spool image. False, with the reason in *error, when it is not a
// muon spool at all; true otherwise, with any slot that makes no sense left
// out and named in *error (the rest is still recovered).
bool readSpool(const char* data, size_t size, SpoolContents* contents, std::string* error);

struct RecoveryReport {
  std::string spool;
  long pid = 0;
  uint64_t lines = 0;       // written out by this recovery
  uint64_t incomplete = 0;  // being copied at the kill: left out
  uint64_t droppedMessages = 0;  // dropped, not reported by the dead process: reported now
  std::string file;         // the log file they went to ("" if none)
  bool live = false;        // a live process holds the spool: left alone
  bool foreign = false;     // another basename's spool: left alone
  std::string error;        // non-empty: not everything could be read or written
};

// Recovers the spool at `path`; with a non-empty `basename`, only if the
// spool is that basename's (else `foreign` is set and nothing touched).
// `output` is asked for the log file, with the dead process's pid, only when
// there is something to write; returning nullptr means there is none.
RecoveryReport recoverSpool(const std::string& path, const std::string& basename,
                            const std::function<LogFile*(long pid)>& output);

// Recovers every dead spool of `basename` into `output`; removes spools
// abandoned half-made. Reports what it found, one entry per spool.
std::vector<RecoveryReport> recoverDeadSpools(const std::string& basename, LogFile* output);

// Removes the <prefix>.<pid>.spool.new files in `dir` (any prefix when
// `prefix` is empty) that nobody holds: spools of processes killed while
// creating theirs, before they were published. They hold no lines (nothing
// is logged before publish). Returns their paths.
std::vector<std::string> removeAbandonedSpools(const std::string& dir, const std::string& prefix);

// Spool files in `dir`: <prefix>.<pid>.spool or <prefix>.<pid>.<n>.spool,
// for the given prefix, or any when prefix is empty. Full paths, sorted.
std::vector<std::string> findSpools(const std::string& dir, const std::string& prefix);

// The basename the spool of process `pid` belongs to (its path without
// ".<pid>.spool" or ".<pid>.<n>.spool"), or "" if the name is not such.
std::string spoolBasename(const std::string& spoolPath, long pid);

}  // namespace muon
