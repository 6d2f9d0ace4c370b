// Compressed and encrypted log files (muon::filestages): each chunk a zstd
// frame or an AES-256-GCM record, read back by the zstd command, by
// readLogFile and by muon-logcat; every way such a file can be damaged is
// caught at its record, after everything before it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "ChildProcess.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/LogFile.h"
#include "muon/base/Logging.h"
#include "muon/base/SyncLogging.h"
#include "muon/base/filestages/AesGcmStage.h"
#include "muon/base/filestages/LogReader.h"
#include "muon/base/filestages/ZstdStage.h"

using muon::AesGcmStage;
using muon::AesKey;
using muon::LogFile;
using muon::ZstdStage;
using muon::test::readFile;
using muon::test::TempDir;

namespace {

constexpr off_t kNoRoll = off_t{1} << 40;
const char kHexKey[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

std::string writeKeyFile(const TempDir& dir, const std::string& name, const std::string& text,
                         mode_t mode = 0600) {
  std::string path = dir.file(name);
  { std::ofstream(path) << text; }
  ::chmod(path.c_str(), mode);
  return path;
}

AesKey keyOf(const std::string& hex) {
  AesKey key;
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return key;
}

std::shared_ptr<AesGcmStage> aes(const std::string& hex = kHexKey) {
  return std::make_shared<AesGcmStage>(keyOf(hex));
}

// `records` chunks of 100 numbered lines, one chunk per flush.
std::string writeLog(LogFile& file, int records, int first = 0) {
  std::string all;
  for (int r = 0; r < records; ++r) {
    for (int i = 0; i < 100; ++i) {
      std::string line = "record " + std::to_string(first + r) + " line " + std::to_string(i) +
                         " the quick brown fox\n";
      file.append(line.data(), line.size());
      all += line;
    }
    file.flush();
  }
  return all;
}

LogFile::Options with(std::vector<std::shared_ptr<muon::FileStage>> stages) {
  LogFile::Options o;
  o.stages = std::move(stages);
  return o;
}

struct Read {
  muon::LogReadResult result;
  std::string text;
};

Read readBack(const std::string& path, const AesKey* key) {
  Read r;
  r.result = muon::readLogFile(path, key, [&](std::string_view t) { r.text.append(t); });
  return r;
}

// Runs a shell command; its stdout, and the exit status in *status.
std::string run(const std::string& command, int* status) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int s = ::pclose(p);
  *status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  return out;
}

bool haveZstdCommand() { return std::system("command -v zstd >/dev/null 2>&1") == 0; }

// Record boundaries of an encrypted file: offsets where each record starts.
std::vector<size_t> recordOffsets(const std::string& bytes) {
  std::vector<size_t> offsets;
  for (size_t pos = 0; pos + AesGcmStage::kHeaderSize <= bytes.size();) {
    offsets.push_back(pos);
    uint32_t n = 0;
    std::memcpy(&n, bytes.data() + pos + 4, 4);
    pos += AesGcmStage::kHeaderSize + n + AesGcmStage::kTagSize;
  }
  return offsets;
}

TEST(ZstdStage, EachChunkIsAFrameThatTheZstdCommandReads) {
  TempDir dir;
  LogFile file(dir.file("z"), kNoRoll, false, 3, 1024, with({std::make_shared<ZstdStage>()}));
  std::string lines = writeLog(file, 10);
  const std::string path = file.currentFileName();
  ASSERT_EQ(path.substr(path.size() - 8), ".log.zst");
  std::string bytes = readFile(path);
  EXPECT_LT(bytes.size(), lines.size() / 3) << "compressed";
  Read r = readBack(path, nullptr);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  EXPECT_EQ(r.text, lines);
  if (!haveZstdCommand()) GTEST_SKIP() << "no zstd command (Debian package zstd) to check against";
  int status = -1;
  EXPECT_EQ(run("zstd -dc '" + path + "'", &status), lines);
  EXPECT_EQ(status, 0);
}

// The seam: write call number `g_dieOnCall` writes half its bytes, then the
// process is killed in the middle of it, as kill -9 during a write would.
std::atomic<int> g_calls{0};
int g_dieOnCall = 0;
ssize_t dieHalfWay(int fd, const char* data, size_t len) {
  if (++g_calls == g_dieOnCall) {
    ssize_t n = ::write(fd, data, len / 2);
    (void)n;
    ::raise(SIGKILL);
  }
  return ::write(fd, data, len);
}

TEST(ZstdStage, AKillInTheMiddleOfAFrameLeavesWholeFramesAndACutOneThatReadersReport) {
  TempDir dir;
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid == 0) {
    LogFile file(dir.file("z"), kNoRoll, false, 3, 1024, with({std::make_shared<ZstdStage>()}));
    g_dieOnCall = 3;
    file.setWriteFunction(&dieHalfWay);
    writeLog(file, 5);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_TRUE(muon::test::waitWithDeadline(pid, &status, std::chrono::seconds(30)));
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  // Two whole frames (records 0 and 1) and half of the third.
  std::string expected;
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 100; ++i) {
      expected += "record " + std::to_string(r) + " line " + std::to_string(i) + " the quick brown fox\n";
    }
  }
  Read r = readBack(files[0], nullptr);
  EXPECT_FALSE(r.result.ok);
  EXPECT_NE(r.result.error.find("cut short or corrupt"), std::string::npos) << r.result.error;
  EXPECT_EQ(r.text, expected) << "everything before the cut, nothing of it";
  int st = -1;
  std::string printed = run(std::string(MUON_LOGCAT_PATH) + " '" + files[0] + "' 2>&1", &st);
  EXPECT_EQ(st, 1);
  EXPECT_EQ(printed.compare(0, expected.size(), expected), 0);
  EXPECT_NE(printed.find("at offset " + std::to_string(r.result.offset)), std::string::npos)
      << printed.substr(expected.size());
  if (!haveZstdCommand()) GTEST_SKIP() << "no zstd command (Debian package zstd) to check against";
  EXPECT_EQ(run("zstd -dc '" + files[0] + "' 2>/dev/null", &st), expected);
  EXPECT_NE(st, 0) << "zstd reports the cut frame too";
}

TEST(AesGcmStage, RoundTripsWithTheKeyAndShowsNothingWithAnother) {
  TempDir dir;
  LogFile file(dir.file("e"), kNoRoll, false, 3, 1024, with({aes()}));
  std::string lines = writeLog(file, 3);
  const std::string path = file.currentFileName();
  ASSERT_EQ(path.substr(path.size() - 8), ".log.enc");
  std::string bytes = readFile(path);
  EXPECT_EQ(bytes.find("quick brown fox"), std::string::npos) << "unreadable at rest";
  AesKey key = keyOf(kHexKey);
  Read r = readBack(path, &key);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  EXPECT_EQ(r.text, lines);
  AesKey wrong = key;
  wrong[31] ^= 1;
  Read w = readBack(path, &wrong);
  EXPECT_FALSE(w.result.ok);
  EXPECT_EQ(w.result.offset, 0u);
  EXPECT_NE(w.result.error.find("authentication failed"), std::string::npos) << w.result.error;
  EXPECT_EQ(w.text, "");
  Read none = readBack(path, nullptr);
  EXPECT_NE(none.result.error.find("--key-file"), std::string::npos);
}

class Damaged : public ::testing::Test {
 protected:
  void SetUp() override {
    LogFile file(dir_.file("e"), kNoRoll, false, 3, 1024, with({aes()}));
    lines_ = writeLog(file, 4);
    path_ = file.currentFileName();
    file.flush();
    bytes_ = readFile(path_);
    offsets_ = recordOffsets(bytes_);
    ASSERT_EQ(offsets_.size(), 4u);
  }
  // Writes `bytes` over the file and reads it back with the key.
  Read readAs(const std::string& bytes) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
    AesKey key = keyOf(kHexKey);
    return readBack(path_, &key);
  }
  // The text of the first n records.
  std::string firstRecords(size_t n) const { return lines_.substr(0, lines_.size() / 4 * n); }

  TempDir dir_;
  std::string lines_, path_, bytes_;
  std::vector<size_t> offsets_;
};

TEST_F(Damaged, AFlippedBitIsCaughtAtItsRecord) {
  std::string b = bytes_;
  b[offsets_[2] + AesGcmStage::kHeaderSize + 10] ^= 0x04;
  Read r = readAs(b);
  EXPECT_FALSE(r.result.ok);
  EXPECT_EQ(r.result.offset, offsets_[2]);
  EXPECT_NE(r.result.error.find("authentication failed"), std::string::npos) << r.result.error;
  EXPECT_EQ(r.text, firstRecords(2));
}

TEST_F(Damaged, ACutRecordIsReportedAfterTheWholeOnes) {
  Read r = readAs(bytes_.substr(0, offsets_[3] + 100));
  EXPECT_FALSE(r.result.ok);
  EXPECT_EQ(r.result.offset, offsets_[3]);
  EXPECT_NE(r.result.error.find("cut short"), std::string::npos) << r.result.error;
  EXPECT_EQ(r.text, firstRecords(3));
}

TEST_F(Damaged, ReorderedRecordsAreCaught) {
  std::string swapped = bytes_.substr(0, offsets_[1]) + bytes_.substr(offsets_[2], offsets_[3] - offsets_[2]) +
                        bytes_.substr(offsets_[1], offsets_[2] - offsets_[1]) + bytes_.substr(offsets_[3]);
  Read r = readAs(swapped);
  EXPECT_FALSE(r.result.ok);
  EXPECT_EQ(r.result.offset, offsets_[1]);
  EXPECT_NE(r.result.error.find("record 2 where 1 was expected"), std::string::npos) << r.result.error;
  EXPECT_EQ(r.text, firstRecords(1));
  // Dropping the first record is caught at once, too.
  Read dropped = readAs(bytes_.substr(offsets_[1]));
  EXPECT_FALSE(dropped.result.ok);
  EXPECT_EQ(dropped.result.offset, 0u);
}

TEST_F(Damaged, ARecordSplicedInFromAnotherFileIsCaught) {
  // Another file under the same key: its record 1 has the right index and a
  // right tag, but another file id.
  LogFile other(dir_.file("other"), kNoRoll, false, 3, 1024, with({aes()}));
  writeLog(other, 2, 100);
  other.flush();
  std::string otherBytes = readFile(other.currentFileName());
  std::vector<size_t> o = recordOffsets(otherBytes);
  ASSERT_EQ(o.size(), 2u);
  std::string spliced = bytes_.substr(0, offsets_[1]) + otherBytes.substr(o[1]) + bytes_.substr(offsets_[2]);
  Read r = readAs(spliced);
  EXPECT_FALSE(r.result.ok);
  EXPECT_EQ(r.result.offset, offsets_[1]);
  EXPECT_NE(r.result.error.find("another file"), std::string::npos) << r.result.error;
  EXPECT_EQ(r.text, firstRecords(1));
}

TEST(AesGcmStage, KeyFilesThatWillNotDoAreRefusedWithTheReason) {
  TempDir dir;
  std::string error;
  EXPECT_FALSE(AesGcmStage::fromKeyFile(dir.file("missing"), &error));
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  EXPECT_FALSE(AesGcmStage::fromKeyFile(writeKeyFile(dir, "open", kHexKey, 0644), &error));
  EXPECT_NE(error.find("accessible by others (mode 0644): chmod 600 it"), std::string::npos) << error;
  EXPECT_FALSE(AesGcmStage::fromKeyFile(writeKeyFile(dir, "short", "0011223344"), &error));
  EXPECT_NE(error.find("must hold a 256-bit key"), std::string::npos) << error;
  EXPECT_EQ(error.find("0011223344"), std::string::npos) << "the key file's bytes are never shown";
  EXPECT_FALSE(AesGcmStage::fromKeyFile(writeKeyFile(dir, "nothex", std::string(64, 'g')), &error));
  EXPECT_FALSE(AesGcmStage::fromKeyFile(dir.path(), &error));
  EXPECT_TRUE(AesGcmStage::fromKeyFile(writeKeyFile(dir, "hex", std::string(kHexKey) + "\n"), &error))
      << error;
  EXPECT_TRUE(AesGcmStage::fromKeyFile(writeKeyFile(dir, "raw", std::string(32, '\x7f')), &error))
      << error;
}

TEST(FileStages, CompressedThenEncryptedRoundTripsAndNoFrameShows) {
  TempDir dir;
  LogFile file(dir.file("ze"), kNoRoll, false, 3, 1024,
               with({std::make_shared<ZstdStage>(), aes()}));
  std::string lines = writeLog(file, 5);
  const std::string path = file.currentFileName();
  ASSERT_EQ(path.substr(path.size() - 12), ".log.zst.enc");
  std::string bytes = readFile(path);
  EXPECT_EQ(bytes.find("\x28\xb5\x2f\xfd"), std::string::npos) << "no zstd frame in the clear";
  EXPECT_LT(bytes.size(), lines.size() / 3);
  AesKey key = keyOf(kHexKey);
  Read r = readBack(path, &key);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  EXPECT_EQ(r.text, lines);
}

// A full disk stops a frame part-way; the cut frame is taken back out, the
// lines in it are counted as lost, and the file stays whole frames.
// As a real disk fills: the second record's write takes half of it, and the
// write of the rest fails with ENOSPC; then space is back.
std::atomic<int> g_writes{0};
ssize_t secondWriteHitsAFullDisk(int fd, const char* data, size_t len) {
  int call = ++g_writes;
  if (call == 2) return ::write(fd, data, len / 2);
  if (call == 3) {
    errno = ENOSPC;
    return -1;
  }
  return ::write(fd, data, len);
}

TEST(FileStages, AFullDiskWhileCompressingCutsTheFrameBackOut) {
  TempDir dir;
  LogFile file(dir.file("z"), kNoRoll, false, 3, 1024, with({std::make_shared<ZstdStage>()}));
  file.setWriteFunction(&secondWriteHitsAFullDisk);
  std::string lines = writeLog(file, 3);
  Read r = readBack(file.currentFileName(), nullptr);
  EXPECT_TRUE(r.result.ok) << r.result.error << " at " << r.result.offset;
  std::string expected = lines.substr(0, lines.size() / 3) + lines.substr(lines.size() / 3 * 2);
  EXPECT_EQ(r.text, expected) << "records 0 and 2; record 1 lost whole";
  EXPECT_EQ(file.stats().lostBytes, lines.size() / 3);
  EXPECT_GE(file.stats().writeErrors, 1u);
}

TEST(FileStages, AsyncLoggingWritesOneFramePerBuffer) {
  TempDir dir;
  muon::AsyncLogging::Options o;
  o.files.stages = {std::make_shared<ZstdStage>()};
  std::string lines;
  {
    muon::AsyncLogging log(dir.file("az"), kNoRoll, o);
    for (int i = 0; i < 100000; ++i) {
      std::string line = "async line " + std::to_string(i) + " padding padding padding\n";
      log.append(line.data(), line.size());
      lines += line;
    }
    log.start();
  }
  std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  Read r = readBack(files[0], nullptr);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  EXPECT_EQ(r.text, lines);
}

struct Cli {
  int status = -1;
  std::string out;
};

Cli logcat(const std::string& args) {
  Cli c;
  c.out = run(std::string(MUON_LOGCAT_PATH) + " " + args + " 2>&1", &c.status);
  return c;
}

TEST(MuonLogcat, PrintsEveryKindAndFailsClearlyOnABadKeyOrUsage) {
  TempDir dir;
  std::string keyFile = writeKeyFile(dir, "key", kHexKey);
  std::string plainLines, zLines, eLines;
  std::string plain, z, e;
  {
    LogFile p(dir.file("p"), kNoRoll, false);
    plainLines = writeLog(p, 1);
    plain = p.currentFileName();
    LogFile zf(dir.file("z"), kNoRoll, false, 3, 1024, with({std::make_shared<ZstdStage>()}));
    zLines = writeLog(zf, 2, 10);
    z = zf.currentFileName();
    std::string error;
    auto stage = AesGcmStage::fromKeyFile(keyFile, &error);
    ASSERT_TRUE(stage) << error;
    LogFile ef(dir.file("e"), kNoRoll, false, 3, 1024, with({std::make_shared<ZstdStage>(), stage}));
    eLines = writeLog(ef, 2, 20);
    e = ef.currentFileName();
  }
  Cli all = logcat("--key-file " + keyFile + " " + plain + " " + z + " " + e);
  EXPECT_EQ(all.status, 0) << all.out;
  EXPECT_EQ(all.out, plainLines + zLines + eLines);

  std::string wrongKey = writeKeyFile(dir, "wrong", std::string(64, 'a'));
  Cli bad = logcat("--key-file " + wrongKey + " " + e);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.out.find(e + ": authentication failed (wrong key, or the record was changed) at offset 0"),
            std::string::npos)
      << bad.out;
  Cli noKey = logcat(e);
  EXPECT_EQ(noKey.status, 1);
  EXPECT_NE(noKey.out.find("give the key (--key-file)"), std::string::npos) << noKey.out;
  Cli openKey = logcat("--key-file " + writeKeyFile(dir, "open", kHexKey, 0644) + " " + e);
  EXPECT_EQ(openKey.status, 1);
  EXPECT_NE(openKey.out.find("chmod 600 it"), std::string::npos) << openKey.out;
  EXPECT_EQ(logcat("").status, 2);
  EXPECT_EQ(logcat("--bogus " + plain).status, 2);
}

}  // namespace

// muon-logcat --json: a text file's lines (with their logfmt fields), here
// compressed, become the JSON lines a JSON log file of the same statements
// holds.
muon::Timestamp fixedClockForJson() { return muon::Timestamp(1795248902123456); }

void logFieldStatements() {
  LOG_INFO << "login" << muon::kv("user", "alice") << muon::kv("ms", 12)
           << muon::kv("note", "two \"words\"\n") << muon::kv("id", "12");
  LOG_WARN << "disk" << muon::kv("free", 0.5) << muon::kv("ok", false) << muon::kv("message", "m");
  LOG_INFO << "no fields at all";
}

TEST(MuonLogcat, JsonGivesTheLinesAJsonFileHolds) {
  TempDir dir;
  muon::Logger::setClock(&fixedClockForJson);
  {
    // The same statements into a zstd text file and, through a second sink
    // (the fan-out hands it records), a JSON file.
    muon::SyncLogging::Options textOptions;
    textOptions.files.stages.push_back(std::make_shared<ZstdStage>());
    muon::SyncLogging text(dir.file("text"), 1 << 30, textOptions);
    muon::SyncLogging::Options jsonOptions;
    jsonOptions.files.format = muon::LineFormat::kJson;
    muon::SyncLogging json(dir.file("json"), 1 << 30, jsonOptions);
    auto toText = muon::Logger::addSink(text);
    auto toJson = muon::Logger::addSink(json);
    logFieldStatements();
  }
  muon::Logger::setClock(nullptr);
  std::string textFile;
  std::string jsonFile;
  for (const std::string& f : dir.files()) {
    if (f.find("/text.") != std::string::npos) textFile = f;
    if (f.find("/json.") != std::string::npos) jsonFile = f;
  }
  ASSERT_FALSE(textFile.empty());
  ASSERT_FALSE(jsonFile.empty());
  int st = -1;
  const std::string printed = run(std::string(MUON_LOGCAT_PATH) + " --json '" + textFile + "'", &st);
  EXPECT_EQ(st, 0);
  EXPECT_EQ(printed, readFile(jsonFile));
  EXPECT_NE(printed.find("\"fields.message\":\"m\""), std::string::npos) << printed;
  EXPECT_NE(printed.find("\"id\":\"12\""), std::string::npos) << printed;
}
