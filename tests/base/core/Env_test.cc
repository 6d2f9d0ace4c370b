// Env: the default is the system calls themselves, results and errno alike.
#include "muon/base/Env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "TempDir.h"

using muon::Env;
using muon::test::readFile;
using muon::test::TempDir;

namespace {

TEST(Env, DefaultMakesTheRealCalls) {
  TempDir dir;
  Env* env = Env::defaultEnv();
  const std::string a = dir.file("a"), b = dir.file("b"), link = dir.file("link");
  int fd = env->open(a.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(env->write(fd, "hello\n", 6), 6);
  ::close(fd);
  EXPECT_EQ(readFile(a), "hello\n");

  struct stat st;
  ASSERT_EQ(env->stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 6);
  ASSERT_EQ(env->rename(a.c_str(), b.c_str()), 0);
  EXPECT_EQ(readFile(b), "hello\n");
  ASSERT_EQ(env->symlink("b", link.c_str()), 0);
  ASSERT_EQ(env->lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(env->stat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(env->unlink(link.c_str()), 0);
  EXPECT_EQ(env->unlink(b.c_str()), 0);
  EXPECT_TRUE(dir.files().empty());
}

TEST(Env, DefaultFailsAsTheSystemCallsDoWithTheirErrno) {
  TempDir dir;
  Env* env = Env::defaultEnv();
  const std::string missing = dir.file("no/such/file");
  struct stat st;
  errno = 0;
  EXPECT_EQ(env->open(missing.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600), -1);
  EXPECT_EQ(errno, ENOENT);
  errno = 0;
  EXPECT_EQ(env->stat(missing.c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  errno = 0;
  EXPECT_EQ(env->unlink(missing.c_str()), -1);
  EXPECT_EQ(errno, ENOENT);
  errno = 0;
  EXPECT_EQ(env->write(-1, "x", 1), -1);
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
