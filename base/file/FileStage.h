// FileStage: a step every chunk takes on its way into a log file.
//
// LogFile runs each chunk it writes (a whole AsyncLogging buffer, or the
// 64 KiB its own buffer holds) through its stages in order and writes the
// result with one write(2). So a compressed or encrypted log is a sequence
// of whole records, readable while it grows; after a crash or a full disk at
// most the last one is cut, and AppendFile cuts a record a full disk broke
// back out of the file. The stages themselves live in the optional target
// muon::filestages (ZstdStage.h, AesGcmStage.h), so that muon::base needs no
// compression or crypto library; LogReader.h reads the files back.
//
// A stage object belongs to one LogFile and is called from the thread that
// writes it (under LogFile's lock when it is thread-safe).
#pragma once

#include <string>
#include <string_view>

namespace muon {

class FileStage {
 public:
  virtual ~FileStage() = default;
  // What the stage adds to file names: ".zst", ".enc".
  virtual const char* suffix() const = 0;
  // A new file begins (encryption: a new file id, records counted from 0).
  virtual void startFile() {}
  // Appends what `in` becomes to *out. False, with the reason in *error,
  // when it cannot; nothing of `in` is written then.
  virtual bool transform(std::string_view in, std::string* out, std::string* error) = 0;
};

}  // namespace muon
