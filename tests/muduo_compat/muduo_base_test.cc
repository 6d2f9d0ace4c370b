// A program in muduo's style using muduo/base through muon::muduo_compat:
// Thread, CurrentThread, MutexLock / MutexLockGuard / Condition,
// CountDownLatch, AtomicInt64, BlockingQueue, ThreadPool, Singleton,
// ThreadLocal, ThreadLocalSingleton, StringPiece, StringArg, get_pointer,
// Timestamp and the log macros. Each check prints what it found; exit
// status 0 if every one holds.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <vector>

#include "muduo/base/Atomic.h"
#include "muduo/base/BlockingQueue.h"
#include "muduo/base/Condition.h"
#include "muduo/base/CountDownLatch.h"
#include "muduo/base/CurrentThread.h"
#include "muduo/base/Logging.h"
#include "muduo/base/Mutex.h"
#include "muduo/base/Singleton.h"
#include "muduo/base/StringPiece.h"
#include "muduo/base/Thread.h"
#include "muduo/base/ThreadLocal.h"
#include "muduo/base/ThreadLocalSingleton.h"
#include "muduo/base/ThreadPool.h"
#include "muduo/base/Timestamp.h"
#include "muduo/base/Types.h"
#include "muduo/net/Callbacks.h"  // get_pointer

using namespace muduo;

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

// Producers add to a counter under a MutexLock and signal a Condition; the
// main thread waits for the total.
class Counter : noncopyable {
 public:
  Counter() : changed_(mutex_) {}
  void add(int n) {
    MutexLockGuard lock(mutex_);
    value_ += n;
    changed_.notifyAll();
  }
  // False if `target` was not reached within `seconds`.
  bool waitFor(int target, double seconds) {
    MutexLockGuard lock(mutex_);
    while (value_ < target) {
      if (changed_.waitForSeconds(seconds)) return value_ >= target;
    }
    return mutex_.isLockedByThisThread();  // held again after waiting
  }

 private:
  MutexLock mutex_;
  Condition changed_;
  int value_ = 0;  // guarded by mutex_
};

void threads() {
  Counter counter;
  AtomicInt64 calls;
  std::vector<std::unique_ptr<Thread>> workers;
  std::set<pid_t> tids;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back(new Thread([&] {
      for (int j = 0; j < 1000; ++j) {
        counter.add(1);
        calls.increment();
      }
    }, "worker" + std::to_string(i)));
    workers.back()->start();
    tids.insert(workers.back()->tid());
  }
  check(counter.waitFor(4000, 10), "4 Threads x 1000 adds under MutexLock, seen through Condition");
  for (auto& t : workers) t->join();
  check(calls.get() == 4000, "AtomicInt64 counted 4000");
  check(tids.size() == 4 && tids.count(CurrentThread::tid()) == 0, "each Thread has its own tid once started");
  check(workers[2]->name() == "worker2" && workers[2]->started(), "Thread name and started()");
  string seen;
  Thread named([&] { seen = CurrentThread::name(); }, "named");
  named.start();
  named.join();
  check(seen == "named" && string(CurrentThread::name()) == "main", "CurrentThread::name()");
}

void latchAndQueue() {
  BlockingQueue<int> queue;
  CountDownLatch ready(2);
  AtomicInt32 sum;
  Thread consumer([&] {
    ready.countDown();
    for (int v; (v = queue.take()) >= 0;) sum.add(v);
  });
  consumer.start();
  ready.countDown();
  ready.wait();
  check(ready.getCount() == 0, "CountDownLatch counted down");
  for (int i = 1; i <= 100; ++i) queue.put(i);
  queue.put(-1);
  consumer.join();
  check(sum.get() == 5050, "BlockingQueue carried 1..100 to another Thread");
}

void threadPool() {
  ThreadPool pool("pool");
  pool.setMaxQueueSize(4);
  AtomicInt32 inits;
  pool.setThreadInitCallback([&] { inits.increment(); });
  pool.start(3);
  CountDownLatch done(50);
  AtomicInt32 ran;
  size_t longestQueue = 0;
  for (int i = 0; i < 50; ++i) {
    pool.run([&] {
      CurrentThread::sleepUsec(100);
      ran.increment();
      done.countDown();
    });
    longestQueue = std::max(longestQueue, pool.queueSize());
  }
  done.wait();
  pool.stop();
  check(ran.get() == 50 && inits.get() == 3, "ThreadPool ran 50 tasks on 3 threads");
  check(longestQueue <= 4, "ThreadPool's queue stayed within setMaxQueueSize(4)");
  ThreadPool inline0;
  inline0.start(0);
  int x = 0;
  inline0.run([&] { x = CurrentThread::tid(); });
  check(x == CurrentThread::tid(), "ThreadPool with 0 threads runs tasks in the caller");
}

struct Registry {
  std::vector<string> names;
};

void perThreadAndSingletons() {
  Singleton<Registry>::instance().names.push_back("main");
  ThreadLocal<string> local;
  local.value() = "main's";
  string seenInThread;
  bool freshSingletonInThread = false;
  Thread t([&] {
    Singleton<Registry>::instance().names.push_back("t");
    seenInThread = local.value();  // a new, empty string in this thread
    freshSingletonInThread = ThreadLocalSingleton<Registry>::pointer() == nullptr;
    ThreadLocalSingleton<Registry>::instance().names.push_back("t only");
  });
  t.start();
  t.join();
  check(Singleton<Registry>::instance().names.size() == 2, "Singleton: one instance for both threads");
  check(seenInThread.empty() && local.value() == "main's", "ThreadLocal: one value per thread");
  check(freshSingletonInThread && ThreadLocalSingleton<Registry>::instance().names.empty(),
        "ThreadLocalSingleton: one instance per thread");
}

void values() {
  StringPiece piece("hello muduo");
  check(piece.size() == 11 && piece.as_string() == "hello muduo" && piece.starts_with("hello"), "StringPiece");
  const Timestamp start = Timestamp::now();
  CurrentThread::sleepUsec(2000);
  check(timeDifference(Timestamp::now(), start) >= 0.002 && start.valid(), "Timestamp and sleepUsec");
  check(implicit_cast<long>(7) == 7L, "implicit_cast");
  auto shared = std::make_shared<int>(5);
  check(get_pointer(shared) == shared.get(), "get_pointer");
  const string text = "arg";
  check(string(StringArg(text).c_str()) == "arg" && string(StringArg("lit").c_str()) == "lit", "StringArg");
  LOG_INFO << "log line from " << piece << " in thread " << CurrentThread::tid();
}

}  // namespace

int main() {
  threads();
  latchAndQueue();
  threadPool();
  perThreadAndSingletons();
  values();
  std::printf("%d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
