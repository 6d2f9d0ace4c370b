// LogSpool's layout and the recovery reader (SpoolRecovery), byte by byte:
// what counts as a message, what is refused, whose spool is whose; and
// muon-recover as a user runs it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ChildProcess.h"
#include "FaultEnv.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/LogFile.h"
#include "muon/base/LogSpool.h"
#include "muon/base/SpoolRecovery.h"

using muon::LogSpool;
using muon::SpoolContents;
using muon::test::readFile;
using muon::test::TempDir;

namespace {

constexpr size_t kSlots = 3;
constexpr size_t kBufferSize = 64 * 1024;

// A spool made by hand: messages put in as AsyncLogging's producers do.
class HandSpool {
 public:
  explicit HandSpool(const std::string& basename) {
    std::string error;
    spool_ = LogSpool::create(basename, kSlots, kBufferSize, &error);
    EXPECT_TRUE(spool_) << error;
  }
  void activate(size_t slot) {
    seal_ = spool_->activate(slot);
    offset_ = 0;
    n_ = 0;
  }
  void put(size_t slot, const std::string& line) {
    std::memcpy(spool_->data(slot) + offset_, line.data(), line.size());
    muon::spool::record(spool_->data(slot), kBufferSize, seal_, n_++, offset_, line.size());
    offset_ += line.size();
  }
  // The entry of message n in `slot` (two words: offset|length, check).
  uint64_t* entry(size_t slot, uint64_t n) {
    return reinterpret_cast<uint64_t*>(spool_->data(slot) + kBufferSize -
                                       (n + 1) * muon::spool::kEntrySize);
  }
  SpoolContents read(std::string* error) {
    std::string bytes = readFile(spool_->path());
    SpoolContents c;
    EXPECT_TRUE(muon::readSpool(bytes.data(), bytes.size(), &c, error)) << *error;
    return c;
  }
  std::string text(size_t slot, const SpoolContents::Buffer& b) const {
    std::string t;
    for (const auto& r : b.lines) t.append(spool_->data(slot) + r.offset, r.length);
    return t;
  }
  LogSpool& spool() { return *spool_; }
  uint64_t seal() const { return seal_; }

 private:
  std::unique_ptr<LogSpool> spool_;
  uint64_t seal_ = 0;
  uint64_t offset_ = 0;
  uint64_t n_ = 0;
};

TEST(LogSpool, MessagesAreReadBackInTheOrderTheBuffersBecameCurrent) {
  TempDir dir;
  HandSpool h(dir.file("s"));
  h.activate(2);
  h.put(2, "first\n");
  h.put(2, "second\n");
  h.activate(0);
  h.put(0, "third\n");
  std::string error;
  SpoolContents c = h.read(&error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(c.pid, static_cast<long>(::getpid()));
  ASSERT_EQ(c.buffers.size(), 2u);
  EXPECT_EQ(c.buffers[0].slot, 2u);
  EXPECT_EQ(h.text(2, c.buffers[0]), "first\nsecond\n");
  EXPECT_EQ(h.text(0, c.buffers[1]), "third\n");
  EXPECT_EQ(c.buffers[0].incomplete, 0u);
}

TEST(LogSpool, AMessageWhoseCheckWasNeverStoredIsLeftOutAndCounted) {
  TempDir dir;
  HandSpool h(dir.file("s"));
  h.activate(1);
  h.put(1, "one\n");
  h.put(1, "two, killed before its last store\n");
  h.put(1, "three\n");
  h.entry(1, 1)[1] = 0;  // the check that was never written
  std::string error;
  SpoolContents c = h.read(&error);
  ASSERT_EQ(c.buffers.size(), 1u);
  EXPECT_EQ(h.text(1, c.buffers[0]), "one\nthree\n");
  EXPECT_EQ(c.buffers[0].incomplete, 1u);
}

TEST(LogSpool, EntriesLeftFromAnEarlierUseOfTheBufferAreIgnored) {
  TempDir dir;
  HandSpool h(dir.file("s"));
  h.activate(0);
  h.put(0, "old one\n");
  h.put(0, "old two\n");
  h.put(0, "old three\n");
  h.activate(0);  // written out and current again: a new generation
  h.put(0, "new\n");
  std::string error;
  SpoolContents c = h.read(&error);
  ASSERT_EQ(c.buffers.size(), 1u);
  EXPECT_EQ(h.text(0, c.buffers[0]), "new\n");
}

TEST(LogSpool, AnEntryPointingIntoItsOwnIndexOrBackwardsIsRefused) {
  TempDir dir;
  HandSpool h(dir.file("s"));
  h.activate(0);
  h.put(0, "good\n");
  h.put(0, "bad\n");
  // Right checks over ranges no producer makes: one overlapping the index
  // itself, one starting before the line ahead of it ends.
  uint64_t intoIndex = (uint64_t{kBufferSize - 8} << 32) | 100;
  uint64_t* e = h.entry(0, 1);
  e[0] = intoIndex;
  e[1] = muon::spool::entryCheck(h.seal(), 1, intoIndex);
  uint64_t backwards = (uint64_t{2} << 32) | 3;
  e = h.entry(0, 2);
  e[0] = backwards;
  e[1] = muon::spool::entryCheck(h.seal(), 2, backwards);
  std::string error;
  SpoolContents c = h.read(&error);
  ASSERT_EQ(c.buffers.size(), 1u);
  EXPECT_EQ(h.text(0, c.buffers[0]), "good\n");
}

// LogSpool as AsyncLogging's BufferStore: what each call leaves in the spool
// is what a recovery would find if the process died right there.
TEST(LogSpool, AsTheStoreItRecordsEachBufferUntilItIsWrittenOrDiscarded) {
  TempDir dir;
  HandSpool h(dir.file("s"));
  LogSpool& store = h.spool();
  EXPECT_EQ(store.memoryFor(0), store.data(0));
  h.activate(0);
  h.put(0, "kept\n");
  h.activate(1);
  h.put(1, "dropped\n");
  store.countDropped(1, 1);
  store.discard(1);
  std::string error;
  SpoolContents c = h.read(&error);
  ASSERT_EQ(c.buffers.size(), 1u) << "a discarded buffer has nothing to recover";
  EXPECT_EQ(c.buffers[0].slot, 0u);
  EXPECT_EQ(c.unreported.messages, 1u);

  // Each write is seen from inside: the spool says where it started.
  muon::LogFile::Options o;
  o.buffered = false;
  muon::LogFile out(dir.file("s"), off_t{1} << 40, false, 3, 1, o);
  SpoolContents during;
  out.setWriteFunction([&](int fd, const char* data, size_t len) {
    std::string e;
    during = h.read(&e);
    return ::write(fd, data, len);
  });
  const std::string report = "1 dropped\n";
  EXPECT_EQ(store.writeReport(report.data(), report.size(), 1, 1, &out).error, 0);
  EXPECT_TRUE(during.reportWriting);
  EXPECT_EQ(during.reportAt.size, 0u);
  EXPECT_EQ(during.reportAt.path, out.currentFileName());

  EXPECT_EQ(store.write(0, store.data(0), 5, &out).error, 0);
  ASSERT_EQ(during.buffers.size(), 1u);
  EXPECT_TRUE(during.buffers[0].writing);
  EXPECT_EQ(during.buffers[0].writtenAt.size, report.size());
  EXPECT_EQ(during.unreported.messages, 0u) << "the report is written";

  c = h.read(&error);
  EXPECT_TRUE(c.buffers.empty()) << "written: nothing left to recover";
  EXPECT_FALSE(c.reportWriting);
  EXPECT_EQ(c.unreported.messages, 0u);
  EXPECT_EQ(readFile(out.currentFileName()), "1 dropped\nkept\n");
}

TEST(SpoolRecovery, BytesThatAreNotASpoolAreRefusedWithTheReason) {
  SpoolContents c;
  std::string error;
  EXPECT_FALSE(muon::readSpool("short", 5, &c, &error));
  EXPECT_NE(error.find("not a muon spool"), std::string::npos) << error;
  std::string junk(1 << 20, 'j');
  error.clear();
  EXPECT_FALSE(muon::readSpool(junk.data(), junk.size(), &c, &error));
  EXPECT_NE(error.find("bad magic"), std::string::npos) << error;

  TempDir dir;
  HandSpool h(dir.file("s"));
  std::string bytes = readFile(h.spool().path());
  std::string cut = bytes.substr(0, bytes.size() / 2);
  error.clear();
  EXPECT_FALSE(muon::readSpool(cut.data(), cut.size(), &c, &error));
  EXPECT_NE(error.find("cut short"), std::string::npos) << error;
  std::string otherVersion = bytes;
  otherVersion[8] = 9;
  error.clear();
  EXPECT_FALSE(muon::readSpool(otherVersion.data(), otherVersion.size(), &c, &error));
  EXPECT_NE(error.find("version 9"), std::string::npos) << error;
}

TEST(SpoolRecovery, SpoolsOfTheVersionsBeforeAreStillRead) {
  // Version 3 added field tags to recorded lines (LogOperands.h); the
  // earlier tags still decode, so spools of versions 1 and 2 are read.
  TempDir dir;
  HandSpool h(dir.file("s"));
  h.activate(0);
  h.put(0, "kept\n");
  std::string bytes = readFile(h.spool().path());
  ASSERT_EQ(static_cast<uint32_t>(bytes[8]), muon::spool::kVersion);
  for (char version : {'\1', '\2'}) {
    bytes[8] = version;
    SpoolContents c;
    std::string error;
    ASSERT_TRUE(muon::readSpool(bytes.data(), bytes.size(), &c, &error)) << error;
    ASSERT_EQ(c.buffers.size(), 1u);
    ASSERT_EQ(c.buffers[0].lines.size(), 1u);
  }
}

TEST(SpoolRecovery, ASlotWithANonsenseStateIsNamedAndTheOthersStillRead) {
  TempDir dir;
  HandSpool h(dir.file("s"));
  h.activate(0);
  h.put(0, "kept\n");
  h.activate(1);
  h.put(1, "lost\n");
  std::string bytes = readFile(h.spool().path());
  uint64_t bad = 7;
  std::memcpy(&bytes[muon::spool::slotOffset(1)], &bad, sizeof bad);  // slot 1's state
  SpoolContents c;
  std::string error;
  ASSERT_TRUE(muon::readSpool(bytes.data(), bytes.size(), &c, &error));
  EXPECT_NE(error.find("slot 1 has a bad state"), std::string::npos) << error;
  ASSERT_EQ(c.buffers.size(), 1u);
  EXPECT_EQ(c.buffers[0].slot, 0u);
}

// Leaves a dead crash-safe process's spool of `basename` holding `lines`.
void leaveDeadSpool(const std::string& basename, const std::vector<std::string>& lines) {
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid == 0) {
    muon::AsyncLogging::Options o;
    o.crashSafe = true;
    muon::AsyncLogging log(basename, off_t{1} << 40, o);
    for (const std::string& l : lines) log.append(l.data(), l.size());
    ::_exit(log.stats().crashSafe ? 0 : 3);
  }
  int status = 0;
  ASSERT_TRUE(muon::test::waitWithDeadline(pid, &status, std::chrono::seconds(30)));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

std::string allLogText(const TempDir& dir, const std::string& prefix) {
  std::string text;
  for (const std::string& f : dir.files()) {
    std::string name = f.substr(dir.path().size() + 1);
    if (name.compare(0, prefix.size(), prefix) == 0 && name.find(".log") != std::string::npos) {
      text += readFile(f);
    }
  }
  return text;
}

TEST(SpoolFormat, EveryNameTheWriterMakesIsReadBackByTheOneParser) {
  namespace spool = muon::spool;
  spool::Name r[2];
  // The first name, and the one a crowded directory gets: both readings of
  // the second are given, <basename>.<pid>.<n> first-come last.
  ASSERT_EQ(spool::parseName(spool::fileName("/d/app", 42), r), 1);
  EXPECT_EQ(r[0].basename, "/d/app");
  EXPECT_EQ(r[0].pid, "42");
  EXPECT_EQ(r[0].sequence, "");
  EXPECT_FALSE(r[0].unpublished);
  ASSERT_EQ(spool::parseName(spool::fileName("app.v2", 42, 3), r), 2);
  EXPECT_EQ(r[0].basename, "app.v2.42");
  EXPECT_EQ(r[0].pid, "3");
  EXPECT_EQ(r[1].basename, "app.v2");
  EXPECT_EQ(r[1].pid, "42");
  EXPECT_EQ(r[1].sequence, "3");
  ASSERT_EQ(spool::parseName(spool::unpublishedName("app", 42), r), 1);
  EXPECT_EQ(r[0].basename, "app");
  EXPECT_EQ(r[0].pid, "42");
  EXPECT_TRUE(r[0].unpublished);
  for (const char* name : {"app.spool", ".42.spool", "app.4x2.spool", "app.42.spool.bak",
                           "app.42.spool.new.bak", "app.42.new"}) {
    EXPECT_EQ(spool::parseName(name, r), 0) << name;
  }
  // A spool is made under its first name only: no sequence in a .new name.
  ASSERT_EQ(spool::parseName("app.42.1.spool.new", r), 1);
  EXPECT_EQ(r[0].basename, "app.42");
  EXPECT_EQ(muon::spoolBasename("/d/app.v2.42.3.spool", 42), "/d/app.v2");
  EXPECT_EQ(muon::spoolBasename("/d/app.v2.42.3.spool", 3), "/d/app.v2.42");
  EXPECT_EQ(muon::spoolBasename("/d/app.42.spool.new", 42), "");
}

TEST(SpoolRecovery, AWriteRefusedByTheDiskKeepsTheSpoolForTheNextRecovery) {
  TempDir dir;
  leaveDeadSpool(dir.file("full"), {"one\n", "two\n"});
  std::vector<std::string> spools = muon::findSpools(dir.path(), "full");
  ASSERT_EQ(spools.size(), 1u);
  muon::test::FaultEnv env;
  env.writeErrno = ENOSPC;
  muon::LogFile::Options o;
  o.env = &env;
  muon::LogFile out(dir.file("full"), off_t{1} << 40, false, 3, 1024, o);
  testing::internal::CaptureStderr();
  muon::RecoveryReport r = muon::recoverSpool(spools[0], "", [&](long) { return &out; });
  testing::internal::GetCapturedStderr();
  EXPECT_NE(r.error.find("cannot write to '" + out.currentFileName() + "'"), std::string::npos)
      << r.error;
  EXPECT_EQ(r.lines, 0u);
  ASSERT_EQ(::access(spools[0].c_str(), F_OK), 0) << "kept for the next recovery";

  env.writeErrno = 0;
  testing::internal::CaptureStderr();  // "writing to ... again"
  r = muon::recoverSpool(spools[0], "", [&](long) { return &out; });
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.lines, 2u);
  EXPECT_NE(::access(spools[0].c_str(), F_OK), 0) << "removed once written";
  std::string text = readFile(out.currentFileName());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;  // header, one, two
  EXPECT_NE(text.find("one\ntwo\n"), std::string::npos) << text;
}

TEST(SpoolRecovery, AnotherBasenamesSpoolIsNeverTouched) {
  TempDir dir;
  // "cs.db" and "cs.7" start like "cs", and "cs.7.<pid>.spool" even looks
  // like a second spool of "cs" (<pid>.<n>): the pid in its header tells.
  leaveDeadSpool(dir.file("cs.db"), {"db line\n"});
  leaveDeadSpool(dir.file("cs.7"), {"seven line\n"});
  leaveDeadSpool(dir.file("cs"), {"own line\n"});
  muon::LogFile out(dir.file("cs"), off_t{1} << 40, false);
  std::vector<muon::RecoveryReport> reports = muon::recoverDeadSpools(dir.file("cs"), &out);
  out.flush();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].lines, 1u);
  std::string text = readFile(out.currentFileName());
  EXPECT_NE(text.find("own line\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("db line"), std::string::npos) << text;
  EXPECT_EQ(text.find("seven line"), std::string::npos) << text;
  EXPECT_EQ(muon::findSpools(dir.path(), "cs.db").size(), 1u);
  EXPECT_EQ(muon::findSpools(dir.path(), "cs.7").size(), 1u);
  EXPECT_EQ(muon::findSpools(dir.path(), "cs").size(), 1u) << "cs.7.<pid>.spool is left";
}

struct ToolRun {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs muon-recover with `args`, working in `cwd` ("": this process's).
ToolRun muonRecover(const std::string& args, const std::string& cwd = "") {
  TempDir scratch;
  std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") + std::string(MUON_RECOVER_PATH) +
                    " " + args + " >" + scratch.file("out") + " 2>" + scratch.file("err");
  ToolRun r;
  r.status = std::system(cmd.c_str());
  r.out = readFile(scratch.file("out"));
  r.err = readFile(scratch.file("err"));
  return r;
}

TEST(MuonRecover, RecoversEveryDeadSpoolWithOneLineEachAndExitsZero) {
  TempDir dir;
  leaveDeadSpool(dir.file("a"), {"a one\n", "a two\n"});
  leaveDeadSpool(dir.file("b"), {"b one\n"});
  ToolRun r = muonRecover(dir.path());
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.err;
  EXPECT_NE(r.out.find(".spool: recovered 2 lines of pid "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".spool: recovered 1 lines of pid "), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  EXPECT_NE(allLogText(dir, "a.").find("a one\na two\n"), std::string::npos);
  EXPECT_NE(allLogText(dir, "b.").find("b one\n"), std::string::npos);
  EXPECT_TRUE(muon::findSpools(dir.path(), "").empty());
  // Run again: nothing left, nothing written twice.
  ToolRun again = muonRecover(dir.path());
  EXPECT_EQ(WEXITSTATUS(again.status), 0);
  EXPECT_EQ(again.out, "");
  std::string a = allLogText(dir, "a.");
  EXPECT_EQ(a.find("a one"), a.rfind("a one"));
}

TEST(MuonRecover, ACorruptSpoolGetsAClearMessageAndStatusOneAndTheRestIsRecovered) {
  TempDir dir;
  leaveDeadSpool(dir.file("a"), {"a one\n"});
  {
    std::ofstream junk(dir.file("c.4242.spool"));
    junk << std::string(10000, 'z');
  }
  ToolRun r = muonRecover(dir.path());
  EXPECT_EQ(WEXITSTATUS(r.status), 1);
  EXPECT_NE(r.err.find("c.4242.spool: not a muon spool (bad magic)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("c.4242.spool: not recovered"), std::string::npos) << r.out;
  EXPECT_NE(allLogText(dir, "a.").find("a one\n"), std::string::npos);
  EXPECT_EQ(::access(dir.file("c.4242.spool").c_str(), F_OK), 0) << "kept for a closer look";
}

TEST(MuonRecover, ALiveSpoolIsLeftAloneAndBadUsageIsStatusTwo) {
  TempDir dir;
  muon::AsyncLogging::Options o;
  o.crashSafe = true;
  muon::AsyncLogging live(dir.file("a"), off_t{1} << 40, o);
  ToolRun r = muonRecover(dir.path());
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.err;
  EXPECT_NE(r.out.find("in use by a live process, left alone"), std::string::npos) << r.out;
  EXPECT_EQ(WEXITSTATUS(muonRecover("").status), 2);
  ToolRun missing = muonRecover(dir.file("no-such-dir"));
  EXPECT_EQ(WEXITSTATUS(missing.status), 1);
  EXPECT_NE(missing.err.find("cannot read directory"), std::string::npos) << missing.err;
}

// A writer that works in its log directory with a relative basename (an
// AsyncLogging of an older build, a recovery given a relative LogFile)
// records a relative path: recovery working elsewhere reads it as a file in
// the spool's directory.
TEST(MuonRecover, ARelativeLogPathIsTakenInTheSpoolsDirectory) {
  TempDir dir;
  leaveDeadSpool(dir.file("old"), {"old one\n", "old two\n"});
  std::vector<std::string> spools = muon::findSpools(dir.path(), "old");
  ASSERT_EQ(spools.size(), 1u);
  // The dead process was writing its buffer (slot 0, the first current one)
  // to old.x.log, and had written part of it.
  const std::string log = "old.20260101-000000.host.1.log";
  {
    std::ofstream f(dir.file(log));
    f << "before\nold one\n";
  }
  struct stat st;
  ASSERT_EQ(::stat(dir.file(log).c_str(), &st), 0);
  int fd = ::open(spools[0].c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  muon::spool::Slot slot;
  const off_t at = static_cast<off_t>(muon::spool::slotOffset(0));
  ASSERT_EQ(::pread(fd, &slot, sizeof slot, at), static_cast<ssize_t>(sizeof slot));
  ASSERT_EQ(slot.state, muon::spool::kActive);
  slot.at.device = static_cast<uint64_t>(st.st_dev);
  slot.at.inode = static_cast<uint64_t>(st.st_ino);
  slot.at.size = 7;  // "before\n"
  std::snprintf(slot.at.path, sizeof slot.at.path, "%s", log.c_str());
  slot.state = muon::spool::kWriting;
  ASSERT_EQ(::pwrite(fd, &slot, sizeof slot, at), static_cast<ssize_t>(sizeof slot));
  ::close(fd);

  ToolRun r = muonRecover(dir.path().substr(1), "/");
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(readFile(dir.file(log)), "before\n") << "cut back to its size before the write";
  std::string text = allLogText(dir, "old.");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;  // before, header, two lines
}

TEST(MuonRecover, RemovesTheHalfMadeSpoolOfAProgramKilledInItsStartUp) {
  TempDir dir;
  // Killed between creating its spool and publishing it (in the recovery
  // that comes in between): a .spool.new nobody holds.
  int status = 0;
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid == 0) {
    std::string error;
    std::unique_ptr<LogSpool> s = LogSpool::create(dir.file("a"), kSlots, kBufferSize, &error);
    ::_exit(s ? 0 : 3);  // no destructor: the file stays, as after a kill
  }
  ASSERT_TRUE(muon::test::waitWithDeadline(pid, &status, std::chrono::seconds(30)));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::string dead = muon::spool::unpublishedName(dir.file("a"), pid);
  ASSERT_EQ(::access(dead.c_str(), F_OK), 0);
  // One being made right now (held by this process), and names that only
  // look like one, stay.
  std::string error;
  std::unique_ptr<LogSpool> live = LogSpool::create(dir.file("b"), kSlots, kBufferSize, &error);
  ASSERT_TRUE(live) << error;
  for (const char* name : {"c.spool.new", "c.12x.spool.new", "c.12.spool.new.bak"}) {
    std::ofstream(dir.file(name)) << "not a spool";
  }
  ToolRun r = muonRecover(dir.path());
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.err;
  EXPECT_NE(::access(dead.c_str(), F_OK), 0) << "removed";
  EXPECT_NE(r.out.find(dead + ": half-made spool of a dead process, removed"), std::string::npos)
      << r.out;
  EXPECT_EQ(::access(live->path().c_str(), F_OK), 0) << "a live one is kept";
  for (const char* name : {"c.spool.new", "c.12x.spool.new", "c.12.spool.new.bak"}) {
    EXPECT_EQ(::access(dir.file(name).c_str(), F_OK), 0) << name;
  }
}

}  // namespace
