// The default output under systemd: when stdout is the journal
// (JOURNAL_STREAM names stdout's device and inode), each line of muon's
// layout starts with its syslog severity, "<6>" for INFO, so that journald
// keeps the levels. Each test logs in a child whose first line decides
// (the output checks once per process); the parent never logs to stdout.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "ChildProcess.h"
#include "Journald.h"
#include "TempDir.h"
#include "muon/base/Logging.h"

namespace {

using muon::Logger;
using muon::test::TempDir;

// JOURNAL_STREAM for descriptor `fd`, or one that names another file.
void setJournalStreamTo(int fd, bool matching) {
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  const unsigned long long inode = static_cast<unsigned long long>(st.st_ino) + (matching ? 0 : 1);
  const std::string value = std::to_string(static_cast<unsigned long long>(st.st_dev)) + ":" +
                            std::to_string(inode);
  ::setenv("JOURNAL_STREAM", value.c_str(), 1);
}

void logEachLevel() {
  Logger::setLogLevel(Logger::DEBUG);
  LOG_DEBUG << "debug line";
  LOG_INFO << "info line";
  LOG_WARN << "warn line";
  LOG_ERROR << "error line";
}

// What a child that logs each level to a pipe as its stdout wrote there.
std::vector<std::string> childLines(bool matching) {
  TempDir dir;
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const muon::test::ChildResult r = muon::test::runInChild(dir, [&] {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    setJournalStreamTo(STDOUT_FILENO, matching);
    logEachLevel();
  });
  ::close(fds[1]);
  EXPECT_EQ(r.exitCode(), 0) << r.stderrText;
  std::string out;
  char chunk[4096];
  ssize_t n;
  while ((n = ::read(fds[0], chunk, sizeof chunk)) > 0) out.append(chunk, static_cast<size_t>(n));
  ::close(fds[0]);
  std::vector<std::string> lines;
  size_t begin = 0, end;
  while ((end = out.find('\n', begin)) != std::string::npos) {
    lines.push_back(out.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

TEST(JournalStream, LinesToTheJournalStartWithTheirSeverity) {
  const std::vector<std::string> lines = childLines(true);
  ASSERT_EQ(lines.size(), 4u);
  const char* expected[] = {"<7>", "<6>", "<4>", "<3>"};
  const char* text[] = {"debug line", "info line", "warn line", "error line"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(lines[i].compare(0, 3, expected[i]), 0) << lines[i];
    EXPECT_NE(lines[i].find(text[i]), std::string::npos) << lines[i];
  }
}

TEST(JournalStream, AnyOtherStdoutGetsTheLinesAsTheyAre) {
  const std::vector<std::string> lines = childLines(false);
  ASSERT_EQ(lines.size(), 4u);
  for (const std::string& l : lines) EXPECT_EQ(l.compare(0, 2, "20"), 0) << l;
}

// The same through a real journald's stdout stream (what systemd hands a
// service as its stdout): journalctl shows each line at its level.
TEST(JournalStream, AJournaldStreamKeepsTheLevels) {
  muon::test::Journald journald;
  std::string why;
  if (!journald.start(&why)) {
    if (muon::test::Journald::required() && !journald.namespaceRefused()) {
      FAIL() << "no private journald: " << why;
    }
    GTEST_SKIP() << "no private journald: " << why;
  }
  const std::string identifier = "muon-stream-" + std::to_string(::getpid());
  TempDir dir;
  const muon::test::ChildResult r = muon::test::runInChild(dir, [&] {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    const std::string path = journald.dir() + "/systemd/journal/stdout";
    std::memcpy(addr.sun_path, path.data(), path.size());
    if (::connect(fd, reinterpret_cast<const struct sockaddr*>(&addr), sizeof addr) != 0) ::_exit(3);
    // journald's stream header: identifier, unit, priority, level prefix,
    // forward to syslog, kmsg, console.
    const std::string header = identifier + "\n\n6\n1\n0\n0\n0\n";
    if (::write(fd, header.data(), header.size()) != static_cast<ssize_t>(header.size())) ::_exit(4);
    ::dup2(fd, STDOUT_FILENO);
    setJournalStreamTo(STDOUT_FILENO, true);
    logEachLevel();
  });
  ASSERT_EQ(r.exitCode(), 0) << r.stderrText;
  ASSERT_TRUE(journald.waitFor(identifier, 4, std::chrono::seconds(20)));
  const std::vector<nlohmann::json> e = journald.entries(identifier);
  ASSERT_EQ(e.size(), 4u);
  const char* priorities[] = {"7", "6", "4", "3"};
  const char* text[] = {"debug line", "info line", "warn line", "error line"};
  for (size_t i = 0; i < 4; ++i) {
    const std::string message = e[i].at("MESSAGE");
    EXPECT_EQ(e[i].at("PRIORITY"), priorities[i]) << message;
    EXPECT_NE(message.find(text[i]), std::string::npos) << message;
    EXPECT_EQ(message.compare(0, 2, "20"), 0) << "the prefix is journald's, not the message's: " << message;
  }
}

}  // namespace
