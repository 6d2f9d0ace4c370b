// muon-recover [--json | --logfmt] DIR: writes out the lines that dead crash-safe AsyncLogging
// processes left in their spools in DIR, for programs that will not start
// again to do it themselves. Each spool's lines go to a new log file of its
// basename in DIR, as the program would have written them, with a report of
// the drops the process had not reported. Spools abandoned half-made by a
// process killed in its start-up are removed, as the program's next start does.
// --json, --logfmt: for programs that write JSON or logfmt lines
// (LogFile::Options::format), the recovered lines are written so.
#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "muon/base/LogFile.h"
#include "muon/base/SpoolRecovery.h"

namespace {

// Recovered files never roll: a spool holds at most a few hundred MiB.
constexpr off_t kRollSize = off_t{1} << 40;

void usage(FILE* out) {
  std::fputs(
      "usage: muon-recover [--json | --logfmt] DIR\n"
      "Writes out the lines that dead crash-safe muon processes left in their\n"
      "spools (BASENAME.PID.spool) in DIR, into new log files of BASENAME in DIR.\n"
      "Drops the process had not reported are reported there too. Spools of\n"
      "live processes are left alone; half-made ones (BASENAME.PID.spool.new) of\n"
      "dead processes are removed. One line per spool on stdout. --json, --logfmt:\n"
      "write JSON or logfmt lines, for programs whose log files hold them.\n"
      "Exit status: 0 when every dead spool was recovered, 1 when one could not\n"
      "be read or written (what could be recovered was), 2 on bad usage.\n",
      out);
}

}  // namespace

int main(int argc, char* argv[]) {
  muon::LogFile::Options options;
  if (argc == 3 && (std::strcmp(argv[1], "--json") == 0 || std::strcmp(argv[1], "--logfmt") == 0)) {
    options.format = argv[1][2] == 'j' ? muon::LineFormat::kJson : muon::LineFormat::kLogfmt;
    --argc;
    ++argv;
  }
  if (argc == 2 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    usage(stdout);
    return 0;
  }
  // An unknown option is not taken for DIR (a directory named so: ./-x).
  if (argc != 2 || argv[1][0] == '\0' || argv[1][0] == '-') {
    usage(stderr);
    return 2;
  }
  std::string dir = argv[1];
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    std::fprintf(stderr, "muon-recover: cannot read directory '%s': %s\n", dir.c_str(),
                 std::strerror(errno));
    return 1;
  }
  ::closedir(d);

  int status = 0;
  for (const std::string& path : muon::findSpools(dir, "")) {
    std::unique_ptr<muon::LogFile> file;
    muon::RecoveryReport r = muon::recoverSpool(path, "", [&](long pid) -> muon::LogFile* {
      std::string basename = muon::spoolBasename(path, pid);
      if (basename.empty()) return nullptr;
      file = std::make_unique<muon::LogFile>(basename, kRollSize, false, 3, 1024, options);
      if (file->currentFileName().empty()) return nullptr;  // reported on stderr by LogFile
      return file.get();
    });
    if (r.live) {
      std::printf("%s: in use by a live process, left alone\n", path.c_str());
    } else if (r.lines > 0 || r.droppedMessages > 0) {
      std::printf("%s: recovered %llu lines of pid %ld into %s", path.c_str(),
                  static_cast<unsigned long long>(r.lines), r.pid, r.file.c_str());
      if (r.incomplete > 0) {
        std::printf("; %llu incomplete lines left out",
                    static_cast<unsigned long long>(r.incomplete));
      }
      if (r.droppedMessages > 0) {
        std::printf("; reported %llu dropped messages",
                    static_cast<unsigned long long>(r.droppedMessages));
      }
      std::printf("\n");
    } else if (r.error.empty()) {
      std::printf("%s: nothing to recover (pid %ld)\n", path.c_str(), r.pid);
    } else {
      std::printf("%s: not recovered\n", path.c_str());
    }
    if (!r.error.empty()) {
      std::fprintf(stderr, "muon-recover: %s: %s\n", path.c_str(), r.error.c_str());
      status = 1;
    }
  }
  for (const std::string& path : muon::removeAbandonedSpools(dir, "")) {
    std::printf("%s: half-made spool of a dead process, removed\n", path.c_str());
  }
  return status;
}
