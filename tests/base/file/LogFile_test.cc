#include "muon/base/LogFile.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "FakeClock.h"
#include "FaultEnv.h"
#include "PosixRegex.h"
#include "TempDir.h"
#include "muon/base/internal/FileIo.h"
#include "muon/base/Logging.h"
#include "muon/base/TimeZone.h"

using muon::LogFile;
using muon::Timestamp;
using muon::test::fakeClock;
using muon::test::readFile;
using muon::test::readLines;
using muon::test::setFakeTime;
using muon::test::TempDir;

namespace {

// 2026-11-21 23:59:59 UTC
constexpr int64_t kLateEvening = 1795305599;

std::string hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

class LogFileTest : public ::testing::Test {
 protected:
  void TearDown() override { muon::Logger::setTimeZone(muon::TimeZone()); }
  TempDir dir_;
};

TEST_F(LogFileTest, FileNameHasDateTimeHostAndPid) {
  std::string name = LogFile::logFileName("/var/log/app", Timestamp::fromUnixTime(kLateEvening));
  EXPECT_EQ(name, "/var/log/app.20261121-235959." + hostname() + "." +
                      std::to_string(::getpid()) + ".log");
}

TEST_F(LogFileTest, FileNameUsesTheLoggersTimeZone) {
  muon::Logger::setTimeZone(muon::TimeZone::load("Asia/Shanghai"));
  std::string name = LogFile::logFileName("app", Timestamp::fromUnixTime(kLateEvening));
  EXPECT_EQ(name.substr(0, 20), "app.20261122-075959.");
}

TEST_F(LogFileTest, OpensAtConstructionAndWritesOnFlush) {
  LogFile file(dir_.file("app"), 1 << 20);
  ASSERT_EQ(dir_.files().size(), 1u);
  EXPECT_EQ(file.currentFileName(), dir_.files()[0]);
  file.append("hello\n", 6);
  file.flush();
  EXPECT_EQ(readFile(file.currentFileName()), "hello\n");
  EXPECT_EQ(file.stats().writtenBytes, 6u);
  EXPECT_EQ(file.stats().filesCreated, 1u);
}

TEST_F(LogFileTest, RollsBySizeWithoutSplittingOrLosingLines) {
  constexpr int kLines = 3000;
  {
    LogFile file(dir_.file("roll"), 200, /*threadSafe=*/false);
    for (int i = 0; i < kLines; ++i) {
      std::string line = "line " + std::to_string(i) + " of the size roll test\n";
      file.append(line.data(), line.size());
    }
  }
  std::vector<std::string> files = dir_.files();
  ASSERT_GT(files.size(), 100u);  // ~35-byte lines, 200-byte files
  // A file is rolled by the first line that takes it past rollSize: each is
  // over 200 bytes by less than a line, but the last, which may be shorter.
  const size_t longestLine = std::string("line 2999 of the size roll test\n").size();
  int shortFiles = 0;
  for (const std::string& f : files) {
    size_t size = readFile(f).size();
    EXPECT_LE(size, 200 + longestLine) << f;
    if (size <= 200) ++shortFiles;
  }
  EXPECT_EQ(shortFiles, 1);
  std::set<int> seen;
  muon::test::PosixRegex lineFormat("line ([0-9]+) of the size roll test");
  for (const std::string& f : files) {
    bool unterminated = false;
    std::vector<std::string> lines = readLines(f, &unterminated);
    EXPECT_FALSE(unterminated) << f << " ends inside a line";
    for (const std::string& line : lines) {
      std::vector<std::string> m;
      ASSERT_TRUE(lineFormat.fullMatch(line, &m)) << "split or garbled: '" << line << "'";
      EXPECT_TRUE(seen.insert(std::stoi(m[1])).second) << "line twice: " << line;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kLines));
}

TEST_F(LogFileTest, RollsInOneSecondNeverReuseAName) {
  setFakeTime(kLateEvening - 60);
  LogFile file(dir_.file("same"), 1 << 20, false);
  file.setClock(&fakeClock);
  for (int i = 0; i < 5; ++i) {
    std::string line = "file " + std::to_string(i) + "\n";
    file.append(line.data(), line.size());
    ASSERT_TRUE(file.rollFile());
  }
  file.append("last\n", 5);
  file.flush();
  std::vector<std::string> files = dir_.files();
  ASSERT_EQ(files.size(), 6u);  // the constructor's file plus 5 rolls, all kept
  std::string all;
  for (const std::string& f : files) all += readFile(f);
  EXPECT_EQ(all.size(), std::string("file 0\nfile 1\nfile 2\nfile 3\nfile 4\nlast\n").size());
  for (int i = 0; i < 5; ++i) EXPECT_NE(all.find("file " + std::to_string(i)), std::string::npos);
  // The same second: one plain name, then .1, .2 ...
  EXPECT_NE(file.currentFileName().find(".log."), std::string::npos);
}

TEST_F(LogFileTest, RollsAtMidnight) {
  setFakeTime(kLateEvening);
  LogFile file(dir_.file("day"), 1 << 20, false, 3, /*checkEveryN=*/1);
  file.setClock(&fakeClock);
  file.append("before\n", 7);
  // The constructor used the real clock; roll onto the fake day first.
  ASSERT_TRUE(file.rollFile());
  std::string evening = file.currentFileName();
  file.append("evening\n", 8);
  setFakeTime(kLateEvening + 1);  // 2026-11-22 00:00:00
  file.append("morning\n", 8);
  EXPECT_NE(file.currentFileName(), evening);
  EXPECT_NE(file.currentFileName().find(".20261122-000000."), std::string::npos);
  file.append("more\n", 5);
  file.flush();
  EXPECT_EQ(readFile(evening), "evening\nmorning\n");  // the line that saw midnight closes the day
  EXPECT_EQ(readFile(file.currentFileName()), "more\n");
}

TEST_F(LogFileTest, MidnightIsLocalMidnight) {
  muon::Logger::setTimeZone(muon::TimeZone::load("Asia/Shanghai"));
  setFakeTime(kLateEvening - 8 * 3600);  // 23:59:59 in Shanghai, 15:59:59 UTC
  LogFile file(dir_.file("tz"), 1 << 20, false, 3, 1);
  file.setClock(&fakeClock);
  ASSERT_TRUE(file.rollFile());
  std::string evening = file.currentFileName();
  EXPECT_NE(evening.find(".20261121-235959."), std::string::npos);
  file.append("a\n", 2);
  setFakeTime(kLateEvening - 8 * 3600 + 1);
  file.append("b\n", 2);
  file.append("c\n", 2);
  EXPECT_NE(file.currentFileName().find(".20261122-000000."), std::string::npos);
}

TEST_F(LogFileTest, FlushesEveryFlushInterval) {
  setFakeTime(kLateEvening - 3600);
  LogFile file(dir_.file("flush"), 1 << 20, false, /*flushInterval=*/3, /*checkEveryN=*/1);
  file.setClock(&fakeClock);
  ASSERT_TRUE(file.rollFile());
  file.append("one\n", 4);
  EXPECT_EQ(readFile(file.currentFileName()), "");  // still in the 64 KiB buffer
  setFakeTime(kLateEvening - 3600 + 2);
  file.append("two\n", 4);
  EXPECT_EQ(readFile(file.currentFileName()), "");
  setFakeTime(kLateEvening - 3600 + 3);
  file.append("three\n", 6);
  EXPECT_EQ(readFile(file.currentFileName()), "one\ntwo\nthree\n");
}

// Lines gather in a 64 KiB buffer: no write(2) until the next line would
// not fit, then one write of everything gathered.
TEST_F(LogFileTest, WritesThroughA64KiBBuffer) {
  std::vector<size_t> writes;
  LogFile file(dir_.file("buffer"), 1 << 30, false, /*flushInterval=*/3600, /*checkEveryN=*/1);
  file.setWriteFunction([&writes](int fd, const char* data, size_t len) -> ssize_t {
    writes.push_back(len);
    return ::write(fd, data, len);
  });
  const std::string line(1000, 'b');
  for (int i = 0; i < 65; ++i) file.append(line.data(), line.size());  // 65,000 bytes
  EXPECT_TRUE(writes.empty());
  file.append(line.data(), line.size());  // 66,000 > 65,536
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0], 65000u);
  file.flush();
  EXPECT_EQ(writes, (std::vector<size_t>{65000, 1000}));
  EXPECT_EQ(file.stats().writtenBytes, 66000u);
}

// threadSafe (the default): lines from several threads at once, with rolls
// in between, each land whole, once.
TEST_F(LogFileTest, ThreadSafeFileTakesLinesFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  uint64_t bytes = 0;
  uint64_t written = 0;
  {
    LogFile file(dir_.file("threads"), 64 * 1024);
    std::vector<std::thread> threads;
    std::atomic<uint64_t> appended{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&file, &appended, t] {
        for (int i = 0; i < kPerThread; ++i) {
          std::string line = "thread " + std::to_string(t) + " line " + std::to_string(i) + '\n';
          file.append(line.data(), line.size());
          appended += line.size();
        }
      });
    }
    for (auto& th : threads) th.join();
    file.flush();
    bytes = appended;
    written = file.stats().writtenBytes;
  }
  EXPECT_EQ(written, bytes);
  EXPECT_GT(dir_.files().size(), 1u);  // it rolled meanwhile
  std::set<std::pair<int, int>> seen;
  muon::test::PosixRegex lineFormat("thread ([0-9]+) line ([0-9]+)");
  for (const std::string& f : dir_.files()) {
    bool unterminated = false;
    for (const std::string& line : readLines(f, &unterminated)) {
      std::vector<std::string> m;
      ASSERT_TRUE(lineFormat.fullMatch(line, &m)) << "garbled: '" << line << "'";
      EXPECT_TRUE(seen.emplace(std::stoi(m[1]), std::stoi(m[2])).second) << line;
    }
    EXPECT_FALSE(unterminated) << f;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST_F(LogFileTest, FailedWritesAreCountedReportedAndRecoverable) {
  std::atomic<bool> diskFull{true};
  LogFile file(dir_.file("full"), 1 << 20, false);
  file.setWriteFunction([&](int fd, const char* data, size_t len) -> ssize_t {
    if (diskFull) {
      errno = ENOSPC;
      return -1;
    }
    return ::write(fd, data, len);
  });
  testing::internal::CaptureStderr();
  for (int i = 0; i < 100; ++i) file.append("lost line\n", 10);
  file.flush();
  file.append("lost again\n", 11);
  file.flush();
  std::string err = testing::internal::GetCapturedStderr();
  LogFile::Stats s = file.stats();
  EXPECT_EQ(s.writtenBytes, 0u);
  EXPECT_EQ(s.lostBytes, 1011u);
  EXPECT_EQ(s.writeErrors, 2u);
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_NE(err.find(file.currentFileName()), std::string::npos) << err;
  // Rate-limited: the same error twice in a row is reported once.
  EXPECT_EQ(err.find("muon::LogFile"), err.rfind("muon::LogFile")) << err;

  diskFull = false;
  testing::internal::CaptureStderr();
  file.append("back\n", 5);
  file.flush();
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(readFile(file.currentFileName()), "back\n");
  EXPECT_EQ(file.stats().writtenBytes, 5u);
  EXPECT_EQ(file.stats().lostBytes, 1011u);
  // The end of the failure is said once...
  EXPECT_NE(err.find("muon::LogFile: writing to '" + file.currentFileName() +
                     "' again (1011 bytes lost so far)"),
            std::string::npos)
      << err;

  // ...and a new failure, even inside the quiet interval, is reported at once.
  diskFull = true;
  testing::internal::CaptureStderr();
  file.append("lost once more\n", 15);
  file.flush();
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_EQ(file.stats().lostBytes, 1026u);
}

TEST_F(LogFileTest, AppendAndFlushSayWhenTheirBytesFailed) {
  muon::test::FaultEnv env;
  env.writeErrno = ENOSPC;
  LogFile::Options o;
  o.env = &env;
  testing::internal::CaptureStderr();
  // Buffered: the append keeps the line, the flush that writes it fails.
  LogFile buffered(dir_.file("buffered"), 1 << 20, false, 3, 1024, o);
  EXPECT_EQ(buffered.append("one\n", 4).error, 0);
  EXPECT_EQ(buffered.flush().error, ENOSPC);
  // A roll inside the append writes out the buffer it closes: its failure
  // is the append's.
  LogFile rolling(dir_.file("rolling"), 10, false, 3, 1024, o);
  EXPECT_EQ(rolling.append("three\n", 6).error, 0);
  EXPECT_EQ(rolling.append("four four\n", 10).error, ENOSPC);
  EXPECT_EQ(rolling.stats().lostBytes, 16u);
  // Unbuffered: the append itself.
  o.buffered = false;
  LogFile direct(dir_.file("direct"), 1 << 20, false, 3, 1024, o);
  EXPECT_EQ(direct.append("two\n", 4).error, ENOSPC);
  // No file to write to: the open's errno.
  LogFile nowhere(dir_.file("no/such/dir/app"), 1 << 20, false);
  EXPECT_EQ(nowhere.append("five\n", 5).error, ENOENT);
  testing::internal::GetCapturedStderr();

  env.writeErrno = 0;
  EXPECT_EQ(buffered.append("six\n", 4).error, 0);
  muon::WriteResult r = buffered.flush();
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.written, 4u);
  EXPECT_EQ(direct.append("seven\n", 6).error, 0);
  EXPECT_EQ(readFile(direct.currentFileName()), "seven\n");
}

TEST_F(LogFileTest, NextPositionIsWhereTheNextAppendLandsAndFlushesNothing) {
  LogFile file(dir_.file("pos"), 1 << 20, false);
  file.append("abc\n", 4);
  muon::FilePosition pos = file.nextPosition();
  EXPECT_EQ(pos.path, file.currentFileName());
  EXPECT_EQ(pos.size, 4u) << "the buffered line counts";
  EXPECT_EQ(readFile(file.currentFileName()), "") << "and stays in the buffer";
  struct stat st;
  ASSERT_EQ(::stat(pos.path.c_str(), &st), 0);
  EXPECT_EQ(pos.device, static_cast<uint64_t>(st.st_dev));
  EXPECT_EQ(pos.inode, static_cast<uint64_t>(st.st_ino));
  file.flush();
  ASSERT_EQ(::stat(pos.path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), pos.size);
  // After a roll: the new file, from its start.
  const std::string before = file.currentFileName();
  ASSERT_TRUE(file.rollFile());
  pos = file.nextPosition();
  EXPECT_NE(pos.path, before);
  EXPECT_EQ(pos.path, file.currentFileName());
  EXPECT_EQ(pos.size, 0u);
  // No file: no position (nothing can have been written to one).
  testing::internal::CaptureStderr();
  LogFile nowhere(dir_.file("no/such/dir/app"), 1 << 20, false);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(nowhere.nextPosition().path, "");
}

TEST_F(LogFileTest, ShortWritesAndEintrAreRetried) {
  int calls = 0;
  LogFile file(dir_.file("short"), 1 << 20, false);
  file.setWriteFunction([&](int fd, const char* data, size_t len) -> ssize_t {
    if (++calls % 2 == 0) {
      errno = EINTR;
      return -1;
    }
    return ::write(fd, data, len < 7 ? len : 7);
  });
  std::string expected;
  for (int i = 0; i < 50; ++i) {
    std::string line = "short write " + std::to_string(i) + "\n";
    expected += line;
    file.append(line.data(), line.size());
  }
  file.flush();
  EXPECT_EQ(readFile(file.currentFileName()), expected);
  EXPECT_EQ(file.stats().writtenBytes, expected.size());
  EXPECT_EQ(file.stats().writeErrors, 0u);
  EXPECT_GT(calls, 100);
}

TEST_F(LogFileTest, BytesAreCountedOnlyWhenWritten) {
  // The kernel takes 10 bytes, then the device fails.
  bool failed = false;
  LogFile file(dir_.file("partial"), 1 << 20, false);
  file.setWriteFunction([&](int fd, const char* data, size_t len) -> ssize_t {
    if (failed) {
      errno = EIO;
      return -1;
    }
    failed = true;
    return ::write(fd, data, len < 10 ? len : 10);
  });
  testing::internal::CaptureStderr();
  file.append("0123456789abcdefghij\n", 21);
  file.flush();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(file.stats().writtenBytes, 10u);
  EXPECT_EQ(file.stats().lostBytes, 11u);
  EXPECT_EQ(readFile(file.currentFileName()), "0123456789");
  EXPECT_NE(err.find("Input/output error"), std::string::npos) << err;
}

TEST_F(LogFileTest, LineCutByAFailedWriteIsEndedBeforeWritingResumes) {
  // A disk with room for 10 more bytes, until space comes back.
  size_t room = 10;
  LogFile file(dir_.file("cut"), 1 << 20, false);
  file.setWriteFunction([&](int fd, const char* data, size_t len) -> ssize_t {
    if (room == 0) {
      errno = ENOSPC;
      return -1;
    }
    size_t n = len < room ? len : room;
    room -= n;
    return ::write(fd, data, n);
  });
  testing::internal::CaptureStderr();
  file.append("0123456789abcdefghij\n", 21);
  file.flush();  // the line is cut after 10 bytes
  file.append("lost\n", 5);
  file.flush();  // not even the '\n' that would end the cut line fits
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(readFile(file.currentFileName()), "0123456789");

  room = 1 << 20;
  file.append("back\n", 5);
  file.flush();
  // The cut line is ended first: "back" is a line of its own, not glued to it.
  EXPECT_EQ(readFile(file.currentFileName()), "0123456789\nback\n");
  EXPECT_EQ(file.stats().writtenBytes, 16u);
  EXPECT_EQ(file.stats().lostBytes, 16u);
}

TEST_F(LogFileTest, MissingDirectoryIsReportedNotFatal) {
  testing::internal::CaptureStderr();
  LogFile file(dir_.file("no/such/dir/app"), 1 << 20);
  file.append("nowhere\n", 8);
  file.flush();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(file.currentFileName(), "");
  EXPECT_NE(err.find("no/such/dir/app"), std::string::npos) << err;
  EXPECT_NE(err.find("No such file or directory"), std::string::npos) << err;
  EXPECT_EQ(file.stats().lostBytes, 8u);
  EXPECT_EQ(file.stats().filesCreated, 0u);
}

TEST_F(LogFileTest, PathThroughARegularFileIsReported) {
  std::string plain = dir_.file("plain");
  { std::ofstream(plain) << "x"; }
  testing::internal::CaptureStderr();
  LogFile file(plain + "/app", 1 << 20);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(file.currentFileName(), "");
  EXPECT_NE(err.find("Not a directory"), std::string::npos) << err;
}

TEST_F(LogFileTest, DeletedFileIsNoticedAtFlushAndReplaced) {
  setFakeTime(kLateEvening - 100);
  LogFile file(dir_.file("rot"), 1 << 20, false);
  file.setClock(&fakeClock);
  file.append("first\n", 6);
  file.flush();
  std::string first = file.currentFileName();
  ASSERT_EQ(::unlink(first.c_str()), 0);  // what logrotate does (or an operator)
  file.flush();
  std::string second = file.currentFileName();
  EXPECT_NE(second, "");
  EXPECT_EQ(::access(second.c_str(), F_OK), 0);
  file.append("second\n", 7);
  file.flush();
  EXPECT_EQ(readFile(second), "second\n");
}

TEST_F(LogFileTest, RenamedFileIsNoticedAtFlushAndReplaced) {
  LogFile file(dir_.file("mv"), 1 << 20, false);
  std::string first = file.currentFileName();
  ASSERT_EQ(::rename(first.c_str(), dir_.file("moved.log").c_str()), 0);
  file.append("to the moved file\n", 18);
  file.flush();  // writes into the renamed file, then notices and replaces it
  EXPECT_EQ(readFile(dir_.file("moved.log")), "to the moved file\n");
  file.append("to the new file\n", 16);
  file.flush();
  EXPECT_NE(file.currentFileName(), dir_.file("moved.log"));
  EXPECT_EQ(readFile(file.currentFileName()), "to the new file\n");
}

}  // namespace

// ---- retention and the current-file link -----------------------------------

namespace {

// 2026-11-20 12:00:00 UTC
constexpr int64_t kNoon = 1795176000;

// An empty file named as LogFile names them, at `seconds`.
std::string plantLog(const TempDir& dir, const std::string& prefix, int64_t seconds,
                     const std::string& suffix = "") {
  std::string path = LogFile::logFileName(dir.file(prefix), Timestamp::fromUnixTime(seconds));
  path += suffix;
  std::ofstream(path) << "old\n";
  return path;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// The log files of `prefix` in `dir`, by name (oldest first).
std::vector<std::string> logsOf(const TempDir& dir, const std::string& prefix) {
  std::vector<std::string> result;
  for (const std::string& f : dir.files()) {
    std::string time;
    long sequence = 0;
    if (LogFile::parseLogFileName(prefix, f.substr(dir.path().size() + 1), &time, &sequence)) {
      result.push_back(f);
    }
  }
  return result;
}

LogFile::Options retention(size_t maxFiles, uint64_t maxTotalBytes, int64_t maxAgeSeconds) {
  LogFile::Options o;
  o.maxFiles = maxFiles;
  o.maxTotalBytes = maxTotalBytes;
  o.maxAgeSeconds = maxAgeSeconds;
  o.clock = &fakeClock;
  return o;
}

}  // namespace

TEST_F(LogFileTest, ParsesOnlyNamesItsOwnPatternMakes) {
  std::string time;
  long seq = -1;
  EXPECT_TRUE(LogFile::parseLogFileName("app", "app.20261120-120000.my.host.42.log", &time, &seq));
  EXPECT_EQ(time, "20261120-120000");
  EXPECT_EQ(seq, 0);
  EXPECT_TRUE(LogFile::parseLogFileName("app", "app.20261120-120000.h.42.log.3.zst.enc", &time, &seq));
  EXPECT_EQ(seq, 3);
  for (const char* foreign : {"app.log", "app.20261120-120000.h.42.log.bak", "app.db.20261120-120000.h.42.log",
                              "app.20261120-12000.h.42.log", "app.20261120-120000.h.x.log",
                              "app.20261120-120000.42.log", "app.7.spool", "other.20261120-120000.h.42.log",
                              "app.20261120-120000.h.42.log.new.42"}) {
    EXPECT_FALSE(LogFile::parseLogFileName("app", foreign, &time, &seq)) << foreign;
  }
}

TEST_F(LogFileTest, RetentionKeepsTheNewestMaxFilesAndNothingElseIsTouched) {
  TempDir elsewhere;
  std::string outside = elsewhere.file("precious");
  std::ofstream(outside) << "precious\n";
  // Not candidates: another basename, a foreign name, a link named like an old log.
  std::string other = plantLog(dir_, "other", kNoon - 86400);
  std::string notes = dir_.file("ret.notes.txt");
  std::ofstream(notes) << "notes\n";
  std::string link = LogFile::logFileName(dir_.file("ret"), Timestamp::fromUnixTime(kNoon - 7200));
  ASSERT_EQ(::symlink(outside.c_str(), link.c_str()), 0);

  setFakeTime(kNoon);
  LogFile file(dir_.file("ret"), 1 << 20, false, 3, 1024, retention(3, 0, 0));
  for (int i = 1; i <= 9; ++i) {
    setFakeTime(kNoon + i);
    file.append("x\n", 2);
    ASSERT_TRUE(file.rollFile());
  }
  std::vector<std::string> kept = logsOf(dir_, "ret");
  // Three regular files, the newest (noon + 7, 8, 9 s), plus the link.
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept[0], link);
  for (int i = 7; i <= 9; ++i) {
    EXPECT_EQ(kept[static_cast<size_t>(i - 6)],
              LogFile::logFileName(dir_.file("ret"), Timestamp::fromUnixTime(kNoon + i)));
  }
  EXPECT_TRUE(exists(other));
  EXPECT_TRUE(exists(notes));
  EXPECT_EQ(readFile(outside), "precious\n");
}

TEST_F(LogFileTest, RetentionKeepsTheTotalUnderMaxTotalBytes) {
  setFakeTime(kNoon);
  const std::string chunk(1000, 'b');
  LogFile file(dir_.file("ret"), 1 << 20, false, 3, 1024, retention(0, 3500, 0));
  for (int i = 1; i <= 8; ++i) {
    file.append(chunk.data(), chunk.size());
    file.flush();
    setFakeTime(kNoon + i);
    ASSERT_TRUE(file.rollFile());
  }
  uint64_t total = 0;
  std::vector<std::string> kept = logsOf(dir_, "ret");
  for (const std::string& f : kept) total += readFile(f).size();
  EXPECT_LE(total, 3500u);
  EXPECT_EQ(kept.size(), 4u);  // three full files and the new, empty one
  EXPECT_EQ(kept.back(), file.currentFileName());
}

TEST_F(LogFileTest, RetentionKeepsAPinnedFileAndNewerOnesUntilTheHardCap) {
  setFakeTime(kNoon);
  const std::string chunk(1000, 'p');
  auto pin = std::make_shared<muon::LogFilePin>();
  LogFile::Options o = retention(2, 0, 0);
  o.pin = pin;
  o.pinnedMaxTotalBytes = 6500;
  LogFile file(dir_.file("ret"), 1 << 20, false, 3, 1024, o);
  // The reader is still on the first file.
  pin->set(muon::fileNameOf(file.currentFileName()));
  const std::string first = file.currentFileName();
  for (int i = 1; i <= 5; ++i) {
    file.append(chunk.data(), chunk.size());
    file.flush();
    setFakeTime(kNoon + i);
    ASSERT_TRUE(file.rollFile());
  }
  // maxFiles = 2, yet all six stay: the total (5,000 bytes) is under the cap.
  EXPECT_EQ(logsOf(dir_, "ret").size(), 6u);
  EXPECT_TRUE(exists(first));
  // Past the hard cap the oldest go, pinned or not.
  for (int i = 6; i <= 8; ++i) {
    file.append(chunk.data(), chunk.size());
    file.flush();
    setFakeTime(kNoon + i);
    ASSERT_TRUE(file.rollFile());
  }
  EXPECT_FALSE(exists(first));
  uint64_t total = 0;
  for (const std::string& f : logsOf(dir_, "ret")) total += readFile(f).size();
  EXPECT_LE(total, 6500u);
  // The reader moves on: the limits apply again up to its file.
  pin->set(muon::fileNameOf(file.currentFileName()));
  setFakeTime(kNoon + 9);
  ASSERT_TRUE(file.rollFile());
  EXPECT_EQ(logsOf(dir_, "ret").size(), 2u);
}

TEST_F(LogFileTest, RetentionAtStartDeletesFilesOlderThanMaxAgeByTheTimeInTheirNames) {
  std::string tenDays = plantLog(dir_, "ret", kNoon - 10 * 86400);
  std::string twoDays = plantLog(dir_, "ret", kNoon - 2 * 86400, ".zst");
  std::string anHour = plantLog(dir_, "ret", kNoon - 3600);
  setFakeTime(kNoon);
  // A short-lived process: retention runs in the constructor, before any line.
  LogFile file(dir_.file("ret"), 1 << 20, false, 3, 1024, retention(0, 0, 86400));
  EXPECT_FALSE(exists(tenDays));
  EXPECT_FALSE(exists(twoDays));
  EXPECT_TRUE(exists(anHour));
  EXPECT_TRUE(exists(file.currentFileName()));
}

TEST_F(LogFileTest, RetentionAtStartKeepsMaxFilesCountingTheNewFile) {
  for (int i = 5; i >= 1; --i) plantLog(dir_, "ret", kNoon - i * 60);
  setFakeTime(kNoon);
  LogFile file(dir_.file("ret"), 1 << 20, false, 3, 1024, retention(2, 0, 0));
  std::vector<std::string> kept = logsOf(dir_, "ret");
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0], LogFile::logFileName(dir_.file("ret"), Timestamp::fromUnixTime(kNoon - 60)));
  EXPECT_EQ(kept[1], file.currentFileName());
}

// Another thread reads basename.log all the time while the file rolls 1000
// times: the link must name an existing file at every moment. (No retention
// here: a reader that resolves the link just as a roll replaces it and
// deletes the file it named can see that file gone, whatever the link does.)
TEST_F(LogFileTest, CurrentLinkNamesAnExistingFileAcrossAThousandRolls) {
  LogFile::Options o;
  o.clock = &fakeClock;
  o.currentLink = true;
  setFakeTime(kNoon);
  LogFile file(dir_.file("cur"), 1 << 20, true, 3, 1024, o);
  const std::string link = dir_.file("cur.log");
  std::atomic<bool> done{false};
  std::atomic<long> checks{0}, broken{0};
  std::thread reader([&] {
    while (!done.load()) {
      char target[4096];
      ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
      struct stat st;
      if (n <= 0 || ::stat(link.c_str(), &st) != 0) ++broken;
      ++checks;
    }
  });
  for (int i = 0; i < 1000; ++i) {
    file.append("line\n", 5);
    ASSERT_TRUE(file.rollFile());
  }
  done = true;
  reader.join();
  EXPECT_EQ(broken.load(), 0) << "of " << checks.load() << " looks at the link";
  EXPECT_GT(checks.load(), 1000);
  char target[4096] = {};
  ASSERT_GT(::readlink(link.c_str(), target, sizeof target - 1), 0);
  EXPECT_EQ(dir_.file(target), file.currentFileName()) << "relative to the directory";
}

// ---- permissions and planted links -----------------------------------------

namespace {

// Runs f with stderr going to a file, and returns what was written there.
template <typename F>
std::string stderrOf(const TempDir& dir, F f) {
  std::fflush(stderr);
  int saved = ::dup(STDERR_FILENO);
  std::string path = dir.file("stderr.txt");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
  f();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string text = readFile(path);
  ::unlink(path.c_str());
  return text;
}

}  // namespace

TEST_F(LogFileTest, NewFilesAreOwnerAndGroupOnlyEvenUnderAPermissiveUmask) {
  mode_t old = ::umask(0);
  LogFile plain(dir_.file("modes"), 1 << 20, false);
  LogFile::Options o;
  o.fileMode = 0600;
  LogFile strict(dir_.file("strict"), 1 << 20, false, 3, 1024, o);
  ::umask(old);
  struct stat st;
  ASSERT_EQ(::stat(plain.currentFileName().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(::stat(strict.currentFileName().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(LogFileTest, ASymlinkPlantedWhereTheNextFileGoesIsNotFollowedAndIsReported) {
  TempDir elsewhere;
  const std::string victim = elsewhere.file("victim");
  { std::ofstream(victim) << "precious\n"; }
  setFakeTime(kNoon);
  const std::string planted = LogFile::logFileName(dir_.file("app"), Timestamp::fromUnixTime(kNoon));
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  LogFile::Options o;
  o.clock = &fakeClock;
  std::unique_ptr<LogFile> file;
  std::string err = stderrOf(dir_, [&] {
    file = std::make_unique<LogFile>(dir_.file("app"), 1 << 20, false, 3, 1024, o);
  });
  file->append("mine\n", 5);
  file->flush();
  EXPECT_EQ(readFile(victim), "precious\n") << "the link was followed";
  EXPECT_EQ(file->currentFileName(), planted + ".1");
  EXPECT_EQ(readFile(file->currentFileName()), "mine\n");
  EXPECT_NE(err.find("create (a symbolic link is in the way) '" + planted + "' failed"),
            std::string::npos)
      << err;
}
