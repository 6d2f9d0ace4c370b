// StopSignals: makes SIGINT and SIGTERM quit an EventLoop, so a program
// stops the way it stops at the end of main: connections closed, log lines
// written, status 0.
//
// The signals are blocked and read from a signalfd that the loop watches
// like any other fd, so no handler runs at an arbitrary point. Construct it
// in main's thread before any other thread starts (every thread then
// inherits the blocked mask and none of them takes the signal), and destroy
// it in the loop's thread after loop() has returned.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"

namespace muon {
namespace examples {

class StopSignals {
 public:
  // Logs "<program> stopping on signal N" when a signal arrives; scripts
  // look for that line.
  StopSignals(net::EventLoop* loop, std::string program) : loop_(loop), program_(std::move(program)) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    fd_ = ::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd_ < 0) {
      LOG_SYSFATAL << "signalfd";
    }
    channel_ = std::make_unique<net::Channel>(loop, fd_);
    channel_->setReadCallback([this](Timestamp) { handleRead(); });
    channel_->enableReading();
  }
  ~StopSignals() {
    channel_->disableAll();
    channel_->remove();
    ::close(fd_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void handleRead() {
    struct signalfd_siginfo info;
    if (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      LOG_INFO << program_ << " stopping on signal " << info.ssi_signo;
      loop_->quit();
    }
  }

  net::EventLoop* const loop_;
  const std::string program_;
  int fd_;
  std::unique_ptr<net::Channel> channel_;
};

}  // namespace examples
}  // namespace muon
