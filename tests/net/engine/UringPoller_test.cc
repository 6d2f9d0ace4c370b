// The io_uring engine: how it is chosen, its fallback to epoll, and the
// readiness channels on it. (The whole net suite also runs on it, as
// uring.*: tests/net/CMakeLists.txt.)
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "EngineSupport.h"
#include "LogCapture.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"

using muon::net::Channel;
using muon::net::EventLoop;
using muon::net::test::ScopedEnv;

namespace {

EventLoop::Options uringOptions() {
  EventLoop::Options o;
  o.engine = EventLoop::Engine::kUring;
  return o;
}

#define SKIP_WITHOUT_URING()                                                    \
  do {                                                                          \
    std::string reason = muon::net::test::uringUnavailableReason();             \
    if (!reason.empty()) GTEST_SKIP() << "io_uring unavailable: " << reason;    \
  } while (0)

// Makes io_uring_setup fail with EPERM in this process from now on, as a
// container's seccomp profile does.
bool forbidIoUringSetup() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

}  // namespace

TEST(UringPoller, OptionSelectsIoUring) {
  SKIP_WITHOUT_URING();
  EventLoop loop(uringOptions());
  EXPECT_EQ(loop.engine(), EventLoop::Engine::kUring);
  EXPECT_STREQ(loop.engineName(), "io_uring");
}

// What the environment asks for is what the loop runs on; this is what makes
// the uring.* and poll.* runs of the suite mean something.
TEST(UringPoller, EnvironmentSelectsTheEngine) {
  const char* uring = std::getenv("MUON_USE_URING");
  const bool wantUring = uring != nullptr && std::string(uring) == "1";
  const bool wantPoll = std::getenv("MUON_USE_POLL") != nullptr;
  if (wantUring && !wantPoll) SKIP_WITHOUT_URING();
  EventLoop loop;
  EXPECT_EQ(loop.engine(), wantPoll    ? EventLoop::Engine::kPoll
                           : wantUring ? EventLoop::Engine::kUring
                                       : EventLoop::Engine::kEpoll);
  {
    ScopedEnv poll("MUON_USE_POLL", nullptr);
    ScopedEnv on("MUON_USE_URING", "1");
    SKIP_WITHOUT_URING();
    std::thread([] {
      EventLoop other;
      EXPECT_EQ(other.engine(), EventLoop::Engine::kUring);
    }).join();
  }
}

// Where io_uring_setup is refused (a seccomp profile here), asking for the
// engine gives epoll and exactly one warning line, however many loops ask;
// the loops work.
TEST(UringPollerDeathTest, RefusedSetupFallsBackToEpollWithOneWarning) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (!forbidIoUringSetup()) ::_exit(3);
        muon::test::LogCapture logs;
        for (int i = 0; i < 3; ++i) {
          std::thread([] {
            EventLoop loop(uringOptions());
            if (loop.engine() != EventLoop::Engine::kEpoll) ::_exit(4);
            loop.runAfter(0.001, [&] { loop.quit(); });
            loop.loop();
          }).join();
        }
        const int warnings = muon::test::LogCapture::count("io_uring unavailable");
        const bool why = muon::test::LogCapture::contains("Operation not permitted");
        ::fprintf(stderr, "%s", muon::test::LogCapture::text().c_str());
        ::_exit(warnings == 1 && why ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "io_uring unavailable \\(io_uring_setup: Operation not permitted\\); using epoll");
}

// A channel removed while its poll is in flight is never called back, even
// when the poll has already fired and its fd number is taken at once by a
// new channel: the stale completion is dropped, and the new channel, which
// has nothing to read, is not called either.
TEST(UringPoller, RemovedChannelIsNotCalledWhenItsFdIsReused) {
  SKIP_WITHOUT_URING();
  EventLoop loop(uringOptions());
  int a[2];
  ASSERT_EQ(::pipe2(a, O_CLOEXEC | O_NONBLOCK), 0);
  int oldCalls = 0;
  auto old = std::make_unique<Channel>(&loop, a[0]);
  old->setReadCallback([&](muon::Timestamp) { ++oldCalls; });
  old->enableReading();
  int b[2] = {-1, -1};
  std::unique_ptr<Channel> fresh;
  int freshCalls = 0;
  loop.runAfter(0.001, [&] {
    // The poll on a[0] is armed: make it fire, then remove the channel
    // before the loop has seen the completion, and reuse the fd number.
    ASSERT_EQ(::write(a[1], "y", 1), 1);
    old->disableAll();
    old->remove();
    old.reset();
    ::close(a[0]);
    ASSERT_EQ(::pipe2(b, O_CLOEXEC | O_NONBLOCK), 0);
    ASSERT_EQ(b[0], a[0]);
    fresh = std::make_unique<Channel>(&loop, b[0]);
    fresh->setReadCallback([&](muon::Timestamp) { ++freshCalls; });
    fresh->enableReading();
  });
  loop.runAfter(0.1, [&] { loop.quit(); });
  loop.loop();
  EXPECT_EQ(oldCalls, 0);
  EXPECT_EQ(freshCalls, 0) << "a stale completion reached the fd's new channel";
  fresh->disableAll();
  fresh->remove();
  ::close(b[0]);
  ::close(b[1]);
  ::close(a[1]);
}

// ---- the receive ring (UringReceiveBlocks) ----------------------------------

#ifdef MUON_HAVE_URING

#include <sys/socket.h>

#include <vector>

#include "muon/net/Buffer.h"
#include "muon/net/internal/UringReceiveBlocks.h"

using muon::net::Buffer;
using muon::net::UringReceiveBlocks;

namespace {

// A ring of its own with the receive blocks registered, and socket pairs
// whose far ends the test writes to.
class ReceiveRing {
 public:
  ReceiveRing() {
    if (io_uring_queue_init(64, &ring_, 0) < 0) return;
    ready_ = true;
    blocks_ = UringReceiveBlocks::create(&ring_, &reason_);
  }
  ~ReceiveRing() {
    if (ready_) io_uring_queue_exit(&ring_);
    blocks_.reset();  // after the ring, as UringPoller does
    for (int fd : fds_) ::close(fd);
  }
  UringReceiveBlocks* blocks() { return blocks_.get(); }
  const std::string& reason() const { return reason_; }

  // A connected pair: {near end, far end}.
  std::pair<int, int> socketPair() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return {-1, -1};
    fds_.push_back(sv[0]);
    fds_.push_back(sv[1]);
    return {sv[0], sv[1]};
  }

  struct Result {
    int fd;
    int res;
    uint32_t flags;
  };
  // Submits a receive on each fd, waits for all of them to complete.
  std::vector<Result> receive(const std::vector<int>& fds) {
    for (int fd : fds) {
      struct io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      blocks_->prepareReceive(sqe, fd);
      io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(fd));
    }
    std::vector<Result> results;
    io_uring_submit_and_wait(&ring_, static_cast<unsigned>(fds.size()));
    while (results.size() < fds.size()) {
      struct io_uring_cqe* cqe = nullptr;
      if (io_uring_wait_cqe(&ring_, &cqe) != 0) break;
      results.push_back(Result{static_cast<int>(io_uring_cqe_get_data64(cqe)), cqe->res, cqe->flags});
      io_uring_cqe_seen(&ring_, cqe);
    }
    return results;
  }

 private:
  struct io_uring ring_ {};
  bool ready_ = false;
  std::string reason_;
  std::unique_ptr<UringReceiveBlocks> blocks_;
  std::vector<int> fds_;
};

#define SKIP_WITHOUT_RECEIVE_RING(r)                                                         \
  do {                                                                                     \
    SKIP_WITHOUT_URING();                                                                  \
    if ((r).blocks() == nullptr) GTEST_SKIP() << "no provided-buffer ring: " << (r).reason(); \
  } while (0)

}  // namespace

TEST(UringReceiveBlocks, ReceiveSwapsItsBlockIntoAnEmptyInputAndAppendsToAFullOne) {
  ReceiveRing ring;
  SKIP_WITHOUT_RECEIVE_RING(ring);
  auto [near, far] = ring.socketPair();
  ASSERT_GE(near, 0);
  ASSERT_EQ(::write(far, "hello", 5), 5);
  std::vector<ReceiveRing::Result> r = ring.receive({near});
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].res, 5);
  ASSERT_TRUE(r[0].flags & IORING_CQE_F_BUFFER);
  Buffer input;
  ring.blocks()->take(r[0].res, r[0].flags, &input);
  EXPECT_EQ(input.toStringView(), "hello");
  // The block itself, not a copy into the input's own 1 KiB.
  EXPECT_EQ(input.readableBytes() + input.writableBytes(), UringReceiveBlocks::kBlockBytes);
  const char* storage = input.peek();

  ASSERT_EQ(::write(far, ", world", 7), 7);
  r = ring.receive({near});
  ASSERT_EQ(r.size(), 1u);
  ring.blocks()->take(r[0].res, r[0].flags, &input);
  EXPECT_EQ(input.toStringView(), "hello, world");
  EXPECT_EQ(input.peek(), storage);
  EXPECT_EQ(ring.blocks()->blocksInRing(), UringReceiveBlocks::kInitialBlocks);
}

TEST(UringReceiveBlocks, RecycledBlocksAreLentNewestFirst) {
  ReceiveRing ring;
  SKIP_WITHOUT_RECEIVE_RING(ring);
  auto [near1, far1] = ring.socketPair();
  auto [near2, far2] = ring.socketPair();
  ASSERT_GE(near1, 0);
  ASSERT_GE(near2, 0);
  ASSERT_EQ(::write(far1, "1", 1), 1);
  ASSERT_EQ(::write(far2, "2", 1), 1);
  std::vector<ReceiveRing::Result> r = ring.receive({near1, near2});
  ASSERT_EQ(r.size(), 2u);
  Buffer first;
  Buffer second;
  ring.blocks()->take(r[0].res, r[0].flags, &first);
  ring.blocks()->take(r[1].res, r[1].flags, &second);
  const char* firstStorage = first.peek();
  const char* secondStorage = second.peek();

  ring.blocks()->recycle(&first);  // not empty: left alone
  EXPECT_EQ(first.peek(), firstStorage);
  EXPECT_EQ(ring.blocks()->freeBlocks(), 0u);
  first.retrieveAll();
  second.retrieveAll();
  ring.blocks()->recycle(&first);
  ring.blocks()->recycle(&second);
  EXPECT_EQ(ring.blocks()->freeBlocks(), 2u);
  EXPECT_LT(first.writableBytes(), UringReceiveBlocks::kBlockBytes);

  Buffer big(0);
  ring.blocks()->lend(&big, UringReceiveBlocks::kBlockBytes + 1);  // too big for a block
  EXPECT_EQ(ring.blocks()->freeBlocks(), 2u);
  // The one recycled last is the warmest in the cache: lent first.
  Buffer out1(0);
  Buffer out2(0);
  ring.blocks()->lend(&out1, 100);
  ring.blocks()->lend(&out2, 100);
  EXPECT_EQ(out1.peek(), secondStorage);
  EXPECT_EQ(out2.peek(), firstStorage);
  EXPECT_EQ(ring.blocks()->freeBlocks(), 0u);
}

TEST(UringReceiveBlocks, ReceiveFindingTheRingEmptyFailsWithENOBUFSUntilItGrows) {
  ReceiveRing ring;
  SKIP_WITHOUT_RECEIVE_RING(ring);
  const unsigned n = UringReceiveBlocks::kInitialBlocks + 1;
  std::vector<int> nears;
  for (unsigned i = 0; i < n; ++i) {
    auto [near, far] = ring.socketPair();
    ASSERT_GE(near, 0);
    ASSERT_EQ(::write(far, "y", 1), 1);
    nears.push_back(near);
  }
  // Every receive finds its data at once and takes a block as it is
  // submitted; the ring is refilled only by take(), after all of them.
  std::vector<ReceiveRing::Result> r = ring.receive(nears);
  ASSERT_EQ(r.size(), n);
  std::vector<int> starved;
  std::vector<Buffer> inputs(n);
  for (unsigned i = 0; i < n; ++i) {
    if (r[i].res == -ENOBUFS) {
      starved.push_back(r[i].fd);
      ring.blocks()->grow();
    } else {
      ASSERT_EQ(r[i].res, 1);
      ring.blocks()->take(r[i].res, r[i].flags, &inputs[i]);
      EXPECT_EQ(inputs[i].toStringView(), "y");
    }
  }
  ASSERT_EQ(starved.size(), 1u);
  EXPECT_EQ(ring.blocks()->blocksInRing(), n);
  r = ring.receive(starved);  // its byte is still in the socket
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].res, 1);
}

#endif  // MUON_HAVE_URING
