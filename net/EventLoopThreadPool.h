// EventLoopThreadPool: the I/O loops of a TcpServer (or of many clients).
//
// start() may be called from any thread, once, before the base loop uses
// the pool; everything else is for the base loop's thread. With 0 threads
// every getNextLoop() returns the base loop.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace muon {
namespace net {

class EventLoop;
class EventLoopThread;

class EventLoopThreadPool {
 public:
  using ThreadInitCallback = std::function<void(EventLoop*)>;

  EventLoopThreadPool(EventLoop* baseLoop, std::string name);
  // Quits and joins every thread.
  ~EventLoopThreadPool();
  EventLoopThreadPool(const EventLoopThreadPool&) = delete;
  EventLoopThreadPool& operator=(const EventLoopThreadPool&) = delete;

  void setThreadNum(int numThreads) { numThreads_ = numThreads; }
  // cb runs in each new loop's thread before it loops; with no threads, in
  // the base loop's thread (at once if start() is called there, else queued
  // to it).
  void start(const ThreadInitCallback& cb = ThreadInitCallback());

  // Round robin.
  EventLoop* getNextLoop();
  // The same hashCode always gets the same loop.
  EventLoop* getLoopForHash(size_t hashCode);
  std::vector<EventLoop*> getAllLoops();

  bool started() const { return started_; }
  const std::string& name() const { return name_; }

 private:
  EventLoop* const baseLoop_;
  const std::string name_;
  bool started_;
  int numThreads_;
  size_t next_;
  std::vector<std::unique_ptr<EventLoopThread>> threads_;
  std::vector<EventLoop*> loops_;
};

}  // namespace net
}  // namespace muon
