// muon-logcat [--json | --logfmt] [--key-file K] FILE...: prints the lines
// of muon's log files, plain, zstd-compressed (.zst), encrypted (.enc) or
// both, in order, also while they are being written; with --json, each line
// as the JSON line a JSON log file would hold (JsonLines.h), with --logfmt
// as the logfmt line a logfmt file would (LineFormat.h): a text line's
// logfmt words at its message's end become its fields (a line's time
// without 'Z' read as UTC), a JSON line is read back into its parts. At a cut, corrupt or forged record it stops
// that file with a message naming the file and the record's offset, after
// printing everything before it, and exits 1.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "muon/base/internal/LineEncoders.h"
#include "muon/base/JsonLines.h"
#include "muon/base/TimeZone.h"
#include "muon/base/filestages/AesGcmStage.h"
#include "muon/base/filestages/LogReader.h"

namespace {

void usage(FILE* out) {
  std::fputs(
      "usage: muon-logcat [--json | --logfmt] [--key-file K] FILE...\n"
      "Prints the lines of muon log files: plain, .zst, .enc or .zst.enc (told from\n"
      "their bytes). --json: each line as a JSON line (fields as keys); --logfmt:\n"
      "each line as a logfmt line (time=... level=... thread=... msg=... fields).\n"
      "--key-file K: the 256-bit key the files were encrypted with\n"
      "(32 bytes or 64 hex digits, mode 600). A cut, corrupt or forged record ends\n"
      "its file with a message on stderr naming the file and offset.\n"
      "Exit status: 0 when every file was read whole, 1 otherwise, 2 on bad usage.\n",
      out);
}

}  // namespace

int main(int argc, char* argv[]) {
  std::string keyFile;
  // The format lines are printed in: nullptr, as the files hold them.
  const muon::detail::LineEncoder* encoder = nullptr;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if (arg == "--json" || arg == "--logfmt") {
      const muon::LineFormat format =
          arg == "--json" ? muon::LineFormat::kJson : muon::LineFormat::kLogfmt;
      if (encoder != nullptr && encoder->format != format) {
        std::fprintf(stderr, "muon-logcat: --json and --logfmt exclude each other\n");
        usage(stderr);
        return 2;
      }
      encoder = &muon::detail::encoderFor(format);
      continue;
    }
    if (arg == "--key-file" || arg.compare(0, 11, "--key-file=") == 0) {
      if (arg == "--key-file") {
        if (++i == argc) {
          std::fprintf(stderr, "muon-logcat: --key-file needs a file\n");
          usage(stderr);
          return 2;
        }
        keyFile = argv[i];
      } else {
        keyFile = arg.substr(11);
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "muon-logcat: unknown option '%s'\n", arg.c_str());
      usage(stderr);
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    usage(stderr);
    return 2;
  }
  muon::AesKey key;
  if (!keyFile.empty()) {
    std::string error;
    if (!muon::loadAesKey(keyFile, &key, &error)) {
      std::fprintf(stderr, "muon-logcat: %s\n", error.c_str());
      return 1;
    }
  }
  int status = 0;
  const muon::TimeZone utc;
  std::string partial;  // --json, --logfmt: a line whose end has not come yet
  std::string out;
  for (const std::string& file : files) {
    muon::LogReadResult r = muon::readLogFile(
        file, keyFile.empty() ? nullptr : &key, [&](std::string_view text) {
          if (encoder == nullptr) {
            std::fwrite(text.data(), 1, text.size(), stdout);
            return;
          }
          partial.append(text);
          const size_t end = partial.rfind('\n');
          if (end == std::string::npos) return;
          out.clear();
          muon::detail::appendTextLines(*encoder, std::string_view(partial).substr(0, end + 1), utc,
                                        muon::detail::FieldsInText::kRead, &out);
          std::fwrite(out.data(), 1, out.size(), stdout);
          partial.erase(0, end + 1);
        });
    if (!partial.empty()) {
      out.clear();
      muon::detail::appendTextLines(*encoder, partial, utc, muon::detail::FieldsInText::kRead, &out);
      std::fwrite(out.data(), 1, out.size(), stdout);
      partial.clear();
    }
    std::fflush(stdout);
    if (!r.ok) {
      std::fprintf(stderr, "muon-logcat: %s: %s at offset %llu\n", file.c_str(), r.error.c_str(),
                   static_cast<unsigned long long>(r.offset));
      status = 1;
    }
  }
  key.fill(0);
  return status;
}
