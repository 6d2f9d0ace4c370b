// Log files on real devices that fail: a tmpfs that fills up (blocks, then
// inodes), one that is or becomes read-only, a directory the process may not
// write to. The write seam tests in LogFile_test.cc cover the same paths by
// injection; these check that the kernel's real errors take them too. Each
// row that needs root (a mount, another user) also runs through the Env seam
// (LogFileFaultEnv, at the end), so it is tested everywhere.
//
// The tmpfs is mounted by a helper child in a mount namespace of its own, so
// nothing is ever mounted on the host, even if the test dies; the test
// reaches it through /proc/<child>/root. Without the right to mount (not
// root, or a container without CAP_SYS_ADMIN) those tests skip.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <fstream>
#include <functional>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "ChildProcess.h"
#include "FakeClock.h"
#include "FaultEnv.h"
#include "NumberedLine.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/LogFile.h"
#include "muon/base/Timestamp.h"

using muon::AsyncLogging;
using muon::LogFile;
using muon::Timestamp;
using muon::test::ChildResult;
using muon::test::fakeClock;
using muon::test::FaultEnv;
using muon::test::numberedLine;
using muon::test::readFile;
using muon::test::readLines;
using muon::test::runInChild;
using muon::test::setFakeTime;
using muon::test::TempDir;

namespace {

// A tmpfs on `mountPoint`, mounted in a private mount namespace held by a
// child process. The child also runs the later remounts, since mount(2) acts
// only in the caller's namespace. Commands go down one pipe, errno values
// come back up another; when the test closes its end the child exits, and
// the namespace and the mount go with it.
class TmpfsMount {
 public:
  TmpfsMount(const std::string& mountPoint, const std::string& options) : mountPoint_(mountPoint) {
    int down[2], up[2];
    if (::pipe2(down, O_CLOEXEC) != 0 || ::pipe2(up, O_CLOEXEC) != 0) {
      error_ = errno;
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(down[1]);
      ::close(up[0]);
      serve(down[0], up[1], options);  // never returns
    }
    ::close(down[0]);
    ::close(up[1]);
    commandFd_ = down[1];
    replyFd_ = up[0];
    if (pid_ < 0) {
      error_ = errno;
      return;
    }
    error_ = reply();
    path_ = "/proc/" + std::to_string(pid_) + "/root" + mountPoint_;
  }
  ~TmpfsMount() {
    if (commandFd_ >= 0) ::close(commandFd_);
    if (replyFd_ >= 0) ::close(replyFd_);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  // 0 once mounted, else the errno of the step that failed.
  int error() const { return error_; }
  // The mount point as this process sees it.
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::vector<std::string> files() const { return TempDir::filesIn(path_); }

  // Each returns 0 or the errno mount(2)/umount(2) gave.
  int remountReadOnly() { return command('r'); }
  int remountReadWrite() { return command('w'); }
  // Mounts an empty read-only tmpfs over the directory: files already open
  // stay writable (they are on the covered one), new ones cannot be created.
  // A plain remount would refuse (EBUSY) while a file is open for writing.
  int coverReadOnly() { return command('c'); }
  int uncover() { return command('u'); }

 private:
  // The child: only system calls from here on, then _exit.
  [[noreturn]] void serve(int commandFd, int replyFd, const std::string& options) {
    const char* dir = mountPoint_.c_str();
    int err = 0;
    // Private first, so that nothing done here propagates to the host.
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", dir, "tmpfs", 0, options.c_str()) != 0) {
      err = errno;
    }
    if (::write(replyFd, &err, sizeof err) != sizeof err) ::_exit(1);
    char c;
    while (err == 0 && ::read(commandFd, &c, 1) == 1) {
      int rc = -1;
      if (c == 'r') rc = ::mount(nullptr, dir, nullptr, MS_REMOUNT | MS_RDONLY, nullptr);
      if (c == 'w') rc = ::mount(nullptr, dir, nullptr, MS_REMOUNT, nullptr);
      if (c == 'c') rc = ::mount("tmpfs", dir, "tmpfs", MS_RDONLY, "size=4k");
      if (c == 'u') rc = ::umount2(dir, 0);
      int result = rc == 0 ? 0 : errno;
      if (::write(replyFd, &result, sizeof result) != sizeof result) break;
    }
    ::_exit(0);
  }

  int command(char c) {
    if (::write(commandFd_, &c, 1) != 1) return errno;
    return reply();
  }
  int reply() {
    int result = 0;
    ssize_t n = ::read(replyFd_, &result, sizeof result);
    return n == sizeof result ? result : EPIPE;  // the child died
  }

  const std::string mountPoint_;
  std::string path_;
  pid_t pid_ = -1;
  int commandFd_ = -1;
  int replyFd_ = -1;
  int error_ = 0;
};

constexpr size_t kTmpfsSize = 1 << 20;
// Few inodes, so that the inode test can run out of them quickly; the root
// directory takes one.
constexpr int kTmpfsInodes = 16;

// Every test here starts on a fresh 1 MiB tmpfs, or skips.
class LogOnTmpfs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root (CAP_SYS_ADMIN)";
    tmpfs_.reset(new TmpfsMount(dir_.path(), "size=" + std::to_string(kTmpfsSize) +
                                                 ",nr_inodes=" + std::to_string(kTmpfsInodes)));
    if (tmpfs_->error() == EPERM || tmpfs_->error() == EACCES) {
      GTEST_SKIP() << "mount(2) not permitted here (" << std::strerror(tmpfs_->error())
                   << "): a container without CAP_SYS_ADMIN?";
    }
    ASSERT_EQ(tmpfs_->error(), 0) << std::strerror(tmpfs_->error());
    if (::access(tmpfs_->file(".").c_str(), W_OK) != 0) {
      GTEST_SKIP() << "the mount cannot be reached through /proc/<pid>/root here ("
                   << std::strerror(errno) << ")";
    }
  }

  // Fills the file system until `left` bytes remain free, with a file that
  // the test deletes to give the space back.
  void fillLeaving(size_t left) {
    std::string filler = tmpfs_->file("filler");
    int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    std::string block(kTmpfsSize - left, 'f');
    ASSERT_EQ(::write(fd, block.data(), block.size()), static_cast<ssize_t>(block.size()));
    ::close(fd);
  }
  void removeFiller() { ASSERT_EQ(::unlink(tmpfs_->file("filler").c_str()), 0); }

  TempDir dir_;  // the mount point, empty on the host
  std::unique_ptr<TmpfsMount> tmpfs_;
};

size_t countOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// What a file written through a full disk must look like: the `tag` lines
// 0..k-1 whole and in order (k may be 0), then at most one line cut short
// (the write the disk stopped), then `after` lines "after 0..afterCount-1"
// whole. Anything else (a line glued to a cut one, a gap, a repeat) fails.
void expectPrefixThenCutThenAfter(const std::vector<std::string>& lines, const std::string& tag,
                                  int afterCount) {
  size_t i = 0;
  int next = 0;
  while (i < lines.size() && lines[i] + "\n" == numberedLine(tag, next)) {
    ++i;
    ++next;
  }
  if (i < lines.size() && lines[i].compare(0, tag.size(), tag) == 0) {
    std::string expected = numberedLine(tag, next);
    EXPECT_LT(lines[i].size() + 1, expected.size()) << "line " << i << ": '" << lines[i] << "'";
    EXPECT_EQ(expected.compare(0, lines[i].size(), lines[i]), 0)
        << "line " << i << " is not a cut '" << tag << "' line: '" << lines[i] << "'";
    ++i;
  }
  ASSERT_EQ(lines.size() - i, static_cast<size_t>(afterCount)) << "lines after the disk had room";
  for (int k = 0; k < afterCount; ++k, ++i) {
    EXPECT_EQ(lines[i] + "\n", numberedLine("after", k)) << "line " << i;
  }
}

// ---- Rows run twice: on the real device (root) and through the Env seam -------

// Out of inodes at a roll: `exhaust` makes creating a file fail with ENOSPC,
// `release` frees one inode again.
void rollOutOfInodesRow(const std::string& basename, const LogFile::Options& options,
                        const std::function<void()>& exhaust,
                        const std::function<void()>& release) {
  LogFile file(basename, 1 << 30, false, 3, 1024, options);
  std::string current = file.currentFileName();
  ASSERT_NE(current, "");
  file.append("first\n", 6);
  exhaust();
  if (::testing::Test::HasFatalFailure()) return;

  testing::internal::CaptureStderr();
  EXPECT_FALSE(file.rollFile());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("LogFile: create '" + basename + "."), std::string::npos) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  // The old file is kept, and still takes lines: nothing is lost.
  EXPECT_EQ(file.currentFileName(), current);
  file.append("second\n", 7);
  file.flush();
  EXPECT_EQ(readFile(current), "first\nsecond\n");
  EXPECT_EQ(file.stats().lostBytes, 0u);
  EXPECT_EQ(file.stats().writeErrors, 1u);

  release();
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_TRUE(file.rollFile());
  EXPECT_NE(file.currentFileName(), current);
  file.append("third\n", 6);
  file.flush();
  EXPECT_EQ(readFile(file.currentFileName()), "third\n");
}

// A read-only file system at start and at a roll: `readOnly`/`writable` make
// the directory so before any file is open, `coverReadOnly`/`uncover` while
// one is.
void readOnlyRow(const std::string& basename, const LogFile::Options& options,
                 const std::function<void()>& readOnly, const std::function<void()>& writable,
                 const std::function<void()>& coverReadOnly,
                 const std::function<void()>& uncover) {
  readOnly();
  if (::testing::Test::HasFatalFailure()) return;
  testing::internal::CaptureStderr();
  LogFile file(basename, 1 << 30, false, 3, 1024, options);
  file.append("lost while read-only\n", 21);
  file.flush();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(file.currentFileName(), "");
  EXPECT_EQ(countOf(err, "muon::LogFile"), 1u) << err;  // rate-limited
  EXPECT_NE(err.find("LogFile: create '" + basename + "."), std::string::npos) << err;
  EXPECT_NE(err.find("Read-only file system"), std::string::npos) << err;
  EXPECT_EQ(file.stats().lostBytes, 21u);
  EXPECT_EQ(file.stats().filesCreated, 0u);
  EXPECT_GE(file.stats().writeErrors, 1u);

  // Writable again: the next flush opens the file.
  writable();
  if (::testing::Test::HasFatalFailure()) return;
  file.flush();
  std::string first = file.currentFileName();
  ASSERT_NE(first, "");
  file.append("kept\n", 5);
  file.flush();

  // Read-only again while the file is open: the roll cannot create its file.
  // LogFile's clock moves past the report rate limit, so this failure is
  // reported too.
  setFakeTime(Timestamp::now().secondsSinceEpoch() + LogFile::kReportInterval + 1);
  file.setClock(&fakeClock);
  coverReadOnly();
  if (::testing::Test::HasFatalFailure()) return;
  testing::internal::CaptureStderr();
  EXPECT_FALSE(file.rollFile());
  file.append("still kept\n", 11);
  file.flush();  // where the name now leads nowhere, it tries to roll again
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(countOf(err, "muon::LogFile"), 1u) << err;
  EXPECT_NE(err.find("LogFile: create '" + basename + "."), std::string::npos) << err;
  EXPECT_NE(err.find("Read-only file system"), std::string::npos) << err;
  EXPECT_NE(err.find("(21 bytes lost so far)"), std::string::npos) << err;
  // The open file still took the line.
  EXPECT_EQ(file.currentFileName(), first);
  EXPECT_EQ(file.stats().lostBytes, 21u);
  uncover();
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(readFile(first), "kept\nstill kept\n");
}

TEST_F(LogOnTmpfs, FullDiskIsReportedOnceCountedAndWritingResumes) {
  fillLeaving(128 * 1024);
  LogFile file(tmpfs_->file("full"), 1 << 30, /*threadSafe=*/false);
  ASSERT_NE(file.currentFileName(), "");
  uint64_t appended = 0;
  int lines = 0;
  auto logSome = [&](int n) {
    for (int k = 0; k < n; ++k, ++lines) {
      std::string line = numberedLine("line", lines);
      file.append(line.data(), line.size());
      appended += line.size();
    }
  };
  testing::internal::CaptureStderr();
  // Until the disk is full: the 64 KiB buffer goes out as it fills.
  while (file.stats().writeErrors == 0 && lines < 100000) logSome(1);
  logSome(5000);  // and well past it, through several more failed writes
  file.flush();
  file.flush();
  std::string err = testing::internal::GetCapturedStderr();

  LogFile::Stats s = file.stats();
  EXPECT_GT(s.writeErrors, 2u);
  EXPECT_GT(s.lostBytes, 5000u * 40);
  EXPECT_EQ(s.writtenBytes + s.lostBytes, appended);  // every byte is one or the other
  EXPECT_LE(s.writtenBytes, 128u * 1024);
  // Reported once, with the file's name and the kernel's words; the other
  // failures fall within the rate limit.
  EXPECT_EQ(countOf(err, "muon::LogFile"), 1u) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_NE(err.find(file.currentFileName()), std::string::npos) << err;
  std::string beforeResume = readFile(file.currentFileName());
  EXPECT_EQ(beforeResume.size(), s.writtenBytes);
  bool cut = !beforeResume.empty() && beforeResume.back() != '\n';

  // Space comes back: the next write goes through, on a line of its own.
  removeFiller();
  testing::internal::CaptureStderr();
  for (int k = 0; k < 100; ++k) {
    std::string line = numberedLine("after", k);
    file.append(line.data(), line.size());
    appended += line.size();
  }
  file.flush();
  // One line says writing works again; no new error.
  std::string resumed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(resumed.find("muon::LogFile: writing to '"), 0u) << resumed;
  EXPECT_EQ(resumed.find("failed"), std::string::npos) << resumed;
  LogFile::Stats t = file.stats();
  EXPECT_EQ(t.writeErrors, s.writeErrors);
  EXPECT_EQ(t.lostBytes, s.lostBytes);
  // Plus the '\n' that ended the cut line.
  EXPECT_EQ(t.writtenBytes + t.lostBytes, appended + (cut ? 1 : 0));
  expectPrefixThenCutThenAfter(readLines(file.currentFileName()), "line", 100);
}

TEST_F(LogOnTmpfs, AsyncLoggingOnAFullDiskNeverBlocksProducersAndResumes) {
  fillLeaving(256 * 1024);
  constexpr int kThreads = 2;
  constexpr int kPerThread = 60000;  // ~6 MB in all: more than one 4 MiB buffer
  AsyncLogging log(tmpfs_->file("async"), 1 << 30, /*flushInterval=*/1, AsyncLogging::kBlock);
  std::atomic<uint64_t> appended{0};
  auto produce = [&](int t) {
    std::string tag = "t" + std::to_string(t);
    for (int i = 0; i < kPerThread; ++i) {
      std::string line = numberedLine(tag, i);
      log.append(line.data(), line.size());
      appended += line.size();
    }
  };
  testing::internal::CaptureStderr();
  auto started = std::chrono::steady_clock::now();
  log.start();
  // kBlock: a backend stuck on the full disk would stop the producers for
  // good. They must finish, and flush() must return.
  std::future<void> done = std::async(std::launch::async, [&] {
    std::vector<std::thread> producers;
    for (int t = 0; t < kThreads; ++t) producers.emplace_back(produce, t);
    for (std::thread& p : producers) p.join();
    log.flush();
  });
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "producers or flush() blocked on a full disk for 60 s\n");
    std::abort();  // the threads cannot be joined; fail loudly rather than hang
  }
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string err = testing::internal::GetCapturedStderr();

  AsyncLogging::Stats s = log.stats();
  EXPECT_EQ(s.messagesDropped, 0u);
  EXPECT_GT(s.file.writeErrors, 0u);
  EXPECT_GT(s.file.lostBytes, 0u);
  EXPECT_EQ(s.file.writtenBytes + s.file.lostBytes, appended.load());
  // One report per LogFile::kReportInterval at most.
  size_t reports = countOf(err, "muon::LogFile");
  EXPECT_GE(reports, 1u) << err;
  EXPECT_LE(reports, 1 + static_cast<size_t>(elapsed / LogFile::kReportInterval)) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;

  removeFiller();
  testing::internal::CaptureStderr();
  for (int k = 0; k < 100; ++k) {
    std::string line = numberedLine("after", k);
    log.append(line.data(), line.size());
  }
  log.flush();
  std::string resumed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(resumed.find("muon::LogFile: writing to '"), 0u) << resumed;
  EXPECT_EQ(resumed.find("failed"), std::string::npos) << resumed;
  EXPECT_EQ(log.stats().file.lostBytes, s.file.lostBytes);

  // What reached the file before it filled up is each thread's first lines,
  // whole and in order (kBlock drops nothing); then at most one line cut
  // short, then the lines logged after the space came back, all whole.
  std::vector<std::string> files = tmpfs_->files();
  ASSERT_EQ(files.size(), 1u);
  std::vector<std::string> lines = readLines(files[0]);
  ASSERT_GE(lines.size(), 100u);
  const size_t afterStart = lines.size() - 100;
  std::vector<int> next(kThreads, 0);
  for (size_t i = 0; i < afterStart; ++i) {
    const std::string& line = lines[i];
    int t = line.size() > 1 && line[0] == 't' ? line[1] - '0' : -1;
    if (t >= 0 && t < kThreads && line + "\n" == numberedLine(line.substr(0, 2), next[t])) {
      ++next[t];
      continue;
    }
    // Not whole: only the last line before the gap may be, and it must be
    // the start of some thread's next line.
    EXPECT_EQ(i + 1, afterStart) << "line " << i << ": '" << line << "'";
    bool cutLine = false;
    for (int u = 0; u < kThreads; ++u) {
      std::string expected = numberedLine("t" + std::to_string(u), next[u]);
      cutLine =
          cutLine || (line.size() < expected.size() && expected.compare(0, line.size(), line) == 0);
    }
    EXPECT_TRUE(cutLine) << "line " << i << ": '" << line << "'";
  }
  EXPECT_GT(next[0] + next[1], 0);
  for (int k = 0; k < 100; ++k) {
    EXPECT_EQ(lines[afterStart + static_cast<size_t>(k)] + "\n", numberedLine("after", k));
  }
}

TEST_F(LogOnTmpfs, RollOutOfInodesIsReportedAndTheCurrentFileKept) {
  std::vector<std::string> fillers;
  rollOutOfInodesRow(
      tmpfs_->file("inodes"), LogFile::Options(),
      [&] {
        // Use up the inodes; the blocks stay free.
        for (int i = 0; i < kTmpfsInodes; ++i) {
          std::string name = tmpfs_->file("inode" + std::to_string(i));
          int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
          if (fd < 0) {
            ASSERT_EQ(errno, ENOSPC) << std::strerror(errno);
            break;
          }
          ::close(fd);
          fillers.push_back(name);
        }
        ASSERT_LT(fillers.size(), static_cast<size_t>(kTmpfsInodes));
      },
      [&] { ASSERT_EQ(::unlink(fillers.back().c_str()), 0); });
}

TEST_F(LogOnTmpfs, ReadOnlyFileSystemIsReportedAtStartAndAtRoll) {
  // At a roll, a read-only tmpfs is mounted over the directory: a remount is
  // refused while a file is open for writing.
  readOnlyRow(
      tmpfs_->file("ro"), LogFile::Options(),
      [&] { ASSERT_EQ(tmpfs_->remountReadOnly(), 0); },
      [&] { ASSERT_EQ(tmpfs_->remountReadWrite(), 0); },
      [&] { ASSERT_EQ(tmpfs_->coverReadOnly(), 0); },
      [&] { ASSERT_EQ(tmpfs_->uncover(), 0); });
}

// root may write anywhere, so the process drops to nobody in a child first.
TEST(LogFileUnwritable, DirectoryWithoutWritePermissionIsReportedNotFatal) {
  TempDir dir;
  // Made before the directory is closed: the child's stderr goes to it.
  std::string errPath = dir.file("stderr.txt");
  { std::ofstream touch(errPath); }
  int result[2];
  ASSERT_EQ(::pipe2(result, O_CLOEXEC), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0555), 0);
  std::string base = dir.file("app");

  ChildResult r = runInChild(dir, [&] {
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      ::_exit(2);
    }
    if (::access(dir.path().c_str(), W_OK) == 0) ::_exit(3);  // would write anyway
    LogFile file(base, 1 << 20, false);
    file.append("nowhere\n", 8);
    file.flush();
    LogFile::Stats s = file.stats();
    char line[128];
    int n = std::snprintf(
        line, sizeof line, "%llu %llu %llu %d", static_cast<unsigned long long>(s.lostBytes),
        static_cast<unsigned long long>(s.writeErrors),
        static_cast<unsigned long long>(s.filesCreated), file.currentFileName().empty() ? 1 : 0);
    if (::write(result[1], line, static_cast<size_t>(n)) != n) ::_exit(4);
  });
  ::close(result[1]);
  char buf[128] = {};
  ssize_t n = ::read(result[0], buf, sizeof buf - 1);
  ::close(result[0]);
  ::chmod(dir.path().c_str(), 0700);
  ASSERT_TRUE(r.exited) << "the child hung";
  ASSERT_TRUE(WIFEXITED(r.status)) << "the child died of signal " << WTERMSIG(r.status);
  if (r.exitCode() == 2) GTEST_SKIP() << "cannot become nobody here (no CAP_SETUID?)";
  if (r.exitCode() == 3) GTEST_SKIP() << "this user may write into a 0555 directory";
  ASSERT_EQ(r.exitCode(), 0);
  ASSERT_GT(n, 0);

  unsigned long long lost = 0, errors = 0, created = 0;
  int noFile = 0;
  ASSERT_EQ(std::sscanf(buf, "%llu %llu %llu %d", &lost, &errors, &created, &noFile), 4) << buf;
  EXPECT_EQ(lost, 8u);
  EXPECT_GE(errors, 1u);
  EXPECT_EQ(created, 0u);
  EXPECT_EQ(noFile, 1);
  const std::string& err = r.stderrText;
  EXPECT_EQ(countOf(err, "muon::LogFile"), 1u) << err;
  EXPECT_NE(err.find("LogFile: create '" + base + "."), std::string::npos) << err;
  EXPECT_NE(err.find("Permission denied"), std::string::npos) << err;
  EXPECT_EQ(dir.files(), std::vector<std::string>{errPath});
}

// Retention meets a file it may not delete: in a sticky directory (as /tmp)
// nobody cannot remove root's files. The failure is reported and logging goes on.
TEST(LogFileUnwritable, AnOldLogThatCannotBeRemovedIsReportedAndLoggingGoesOn) {
  // Only root can own a file that the user it drops to cannot remove; the
  // Env-seam twin (LogFileFaultEnv) runs this row for everyone else.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 01777), 0);
  std::string old = LogFile::logFileName(dir.file("app"), Timestamp::fromUnixTime(1700000000));
  { std::ofstream(old) << "old\n"; }
  ChildResult r = runInChild(dir, [&] {
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      ::_exit(2);
    }
    if (::geteuid() == 0) ::_exit(3);
    LogFile::Options o;
    o.maxFiles = 1;
    LogFile file(dir.file("app"), 1 << 20, false, 3, 1024, o);
    file.append("goes on\n", 8);
    file.flush();
    if (file.currentFileName().empty()) ::_exit(4);
  });
  ::chmod(dir.path().c_str(), 0700);
  ASSERT_TRUE(r.exited) << "the child hung";
  ASSERT_TRUE(WIFEXITED(r.status)) << r.status;
  if (r.exitCode() == 2 || r.exitCode() == 3) {
    GTEST_SKIP() << "cannot become nobody here (no CAP_SETUID?)";
  }
  ASSERT_EQ(r.exitCode(), 0);
  const std::string& err = r.stderrText;
  EXPECT_NE(err.find("remove old log '" + old + "' failed: "), std::string::npos) << err;
  EXPECT_TRUE(readFile(old) == "old\n") << "kept";
  std::string all;
  for (const std::string& f : dir.files()) all += readFile(f);
  EXPECT_NE(all.find("goes on\n"), std::string::npos);
}

// ---- The same rows without root, through the Env seam -------------------------
// Each test above that needs a mount or another user has a twin here: a
// FaultEnv gives LogFile the errno the device or directory would, so the
// read-only, out-of-inodes and unwritable-directory paths run everywhere.

TEST(LogFileFaultEnv, ReadOnlyFileSystemIsReportedAtStartAndAtRoll) {
  TempDir dir;
  FaultEnv env;
  LogFile::Options o;
  o.env = &env;
  auto readOnly = [&] { env.openErrno = EROFS; };
  auto writable = [&] { env.openErrno = 0; };
  readOnlyRow(dir.file("ro"), o, readOnly, writable, readOnly, writable);
}

TEST(LogFileFaultEnv, RollOutOfInodesIsReportedAndTheCurrentFileKept) {
  TempDir dir;
  FaultEnv env;
  LogFile::Options o;
  o.env = &env;
  // ENOSPC is what open(2) says when no inode is left.
  rollOutOfInodesRow(dir.file("inodes"), o, [&] { env.openErrno = ENOSPC; },
                     [&] { env.openErrno = 0; });
}

TEST(LogFileFaultEnv, DirectoryWithoutWritePermissionIsReportedNotFatal) {
  TempDir dir;
  FaultEnv env;
  LogFile::Options o;
  o.env = &env;
  env.openErrno = EACCES;
  std::string base = dir.file("app");
  testing::internal::CaptureStderr();
  {
    LogFile file(base, 1 << 20, false, 3, 1024, o);
    file.append("nowhere\n", 8);
    file.flush();
    LogFile::Stats s = file.stats();
    EXPECT_EQ(s.lostBytes, 8u);
    EXPECT_GE(s.writeErrors, 1u);
    EXPECT_EQ(s.filesCreated, 0u);
    EXPECT_EQ(file.currentFileName(), "");
  }
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(countOf(err, "muon::LogFile"), 1u) << err;
  EXPECT_NE(err.find("LogFile: create '" + base + "."), std::string::npos) << err;
  EXPECT_NE(err.find("Permission denied"), std::string::npos) << err;
  EXPECT_TRUE(dir.files().empty());
}

TEST(LogFileFaultEnv, AnOldLogThatCannotBeRemovedIsReportedAndLoggingGoesOn) {
  TempDir dir;
  std::string old = LogFile::logFileName(dir.file("app"), Timestamp::fromUnixTime(1700000000));
  { std::ofstream(old) << "old\n"; }
  FaultEnv env;
  env.unlinkErrno = EPERM;  // a sticky directory and another user's file
  LogFile::Options o;
  o.env = &env;
  o.maxFiles = 1;
  testing::internal::CaptureStderr();
  {
    LogFile file(dir.file("app"), 1 << 20, false, 3, 1024, o);
    file.append("goes on\n", 8);
    file.flush();
    EXPECT_NE(file.currentFileName(), "");
  }
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("remove old log '" + old + "' failed: "), std::string::npos) << err;
  EXPECT_TRUE(readFile(old) == "old\n") << "kept";
  std::string all;
  for (const std::string& f : dir.files()) all += readFile(f);
  EXPECT_NE(all.find("goes on\n"), std::string::npos);
}

}  // namespace
