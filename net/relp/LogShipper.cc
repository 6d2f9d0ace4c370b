#include "muon/net/relp/LogShipper.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>

#include "muon/base/internal/FileIo.h"
#include "muon/base/Logging.h"
#include "muon/base/SyslogFormat.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"

namespace muon {
namespace net {
namespace relp {

struct LogShipper::Sent {
  uint64_t tag;
  bool isLine;    // a line of a file, numbered `line`; else a warning
  uint64_t line;
  std::optional<LogPosition> after;  // where the state moves once it is acknowledged
};

// What notify() and wakeFunction() share with the loop: the shipper may be
// gone when a wake-up arrives.
struct LogShipper::Waker {
  EventLoop* loop;
  std::mutex mutex;  // guards shipper against destruction
  LogShipper* shipper;
  std::atomic<bool> pending{false};

  void wake(const std::shared_ptr<Waker>& self) {
    if (pending.exchange(true)) return;
    std::lock_guard<std::mutex> lock(mutex);
    if (!shipper) return;
    loop->queueInLoop([self] {
      self->pending = false;
      LogShipper* s;
      {
        std::lock_guard<std::mutex> guard(self->mutex);
        s = self->shipper;
      }
      if (s) s->pump();  // destroyed only in this thread: still alive here
    });
  }
};

namespace {

// HOSTNAME and PROCID from a file's name: basename.TIME.HOST.PID.log[.N][.zst][.enc].
void hostAndPid(const std::string& prefix, const std::string& name, std::string* host, pid_t* pid) {
  *host = "-";
  *pid = 0;
  if (name.size() < prefix.size() + 17) return;
  std::string rest = name.substr(prefix.size() + 17);  // after "prefix.YYYYmmdd-HHMMSS."
  const size_t log = rest.rfind(".log");
  if (log == std::string::npos) return;
  rest.resize(log);
  const size_t dot = rest.rfind('.');
  if (dot == std::string::npos) return;
  *host = rest.substr(0, dot);
  *pid = static_cast<pid_t>(std::atol(rest.c_str() + dot + 1));
}

RelpClientOptions windowed(RelpClientOptions relp) {
  // Every line handed to the client may be on the wire: the horizon counts on it.
  relp.queueLimit = relp.window;
  return relp;
}

}  // namespace

LogShipper::LogShipper(EventLoop* loop, const InetAddress& server, LogShipperOptions options)
    : loop_(loop),
      options_(std::move(options)),
      client_(loop, server, windowed(options_.relp)),
      follower_(options_.basename, options_.key.get(), options_.finishGraceMs),
      sent_(std::make_unique<std::deque<Sent>>()),
      waker_(std::make_shared<Waker>()) {
  filePrefix_ = fileNameOf(options_.basename) + ".";
  if (options_.appName.empty()) options_.appName = fileNameOf(options_.basename);
  options_.relp = client_.options();
  waker_->loop = loop;
  waker_->shipper = this;
}

LogShipper::~LogShipper() {
  {
    std::lock_guard<std::mutex> lock(waker_->mutex);
    waker_->shipper = nullptr;
  }
  loop_->cancel(pollTimer_);
  loop_->cancel(syncTimer_);
  if (inotifyChannel_) {
    inotifyChannel_->disableAll();
    inotifyChannel_->remove();
  }
  if (inotifyFd_ >= 0) ::close(inotifyFd_);
}

bool LogShipper::start(std::string* error) {
  loop_->assertInLoopThread();
  if (!options_.stateFile.empty()) {
    bool exists = false;
    if (!ShipState::load(options_.stateFile, &state_, &exists, error)) return false;
  }
  nextLine_ = state_.ackedLines;
  restartResendUntil_ = state_.horizon;
  resentBase_ = state_.resent;
  savedHorizon_ = options_.stateFile.empty() ? std::numeric_limits<uint64_t>::max() : state_.horizon;
  shipped_ = state_.ackedLines;
  skipped_ = state_.skipped;
  resent_ = state_.resent;
  follower_.seek(state_.acked);

  inotifyFd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotifyFd_ < 0 ||
      ::inotify_add_watch(inotifyFd_, follower_.directory().c_str(),
                          IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_MODIFY |
                              IN_CLOSE_WRITE) < 0) {
    *error = "cannot watch " + follower_.directory() + ": " + std::strerror(errno);
    return false;
  }
  inotifyChannel_ = std::make_unique<Channel>(loop_, inotifyFd_);
  inotifyChannel_->setReadCallback([this](Timestamp) { onInotify(); });
  inotifyChannel_->enableReading();

  client_.setAckCallback([this](uint64_t tag) { onAck(tag); });
  client_.setResumeCallback([this] { pump(); });
  // The session's lines for people (the first failure, then at most one per
  // reportIntervalMs while the server stays away, and its return).
  client_.setReportCallback([this](const std::string& line) { report("RELP: " + line); });
  client_.setClosedCallback([this](bool clean) {
    saveState(true);
    if (stopped_) stopped_(clean && sent_->empty());
  });
  pollTimer_ = loop_->runEvery(options_.pollIntervalMs / 1000.0, [this] {
    rescanWanted_ = true;
    pump();
  });
  syncTimer_ = loop_->runEvery(options_.stateSyncMs / 1000.0, [this] { saveState(false); });
  client_.start();
  pump();
  return true;
}

void LogShipper::notify() { waker_->wake(waker_); }

std::function<void()> LogShipper::wakeFunction() {
  std::shared_ptr<Waker> waker = waker_;
  return [waker] { waker->wake(waker); };
}

void LogShipper::onInotify() {
  alignas(struct inotify_event) char buf[8192];
  ssize_t n;
  while ((n = ::read(inotifyFd_, buf, sizeof buf)) > 0) {
    for (char* p = buf; p < buf + n;) {
      const auto* e = reinterpret_cast<const struct inotify_event*>(p);
      // Only the basename's own files: a state file kept beside them must
      // not make every save a directory listing.
      const bool ours = e->len > 0 && std::strncmp(e->name, filePrefix_.c_str(), filePrefix_.size()) == 0;
      if ((e->mask & IN_Q_OVERFLOW) ||
          (ours && (e->mask & (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)))) {
        rescanWanted_ = true;
      }
      p += sizeof(struct inotify_event) + e->len;
    }
  }
  pump();
}

void LogShipper::pump() {
  if (stopping_) return;
  if (rescanWanted_) {
    rescanWanted_ = false;
    follower_.rescan();
  }
  for (;;) {
    for (const LogFollower::Skip& skip : follower_.takeSkips()) {
      state_.skipped += skip.lines;
      skipped_ = state_.skipped;
      const std::string text =
          "muon-ship: " + (skip.unknown ? std::string("the lines") : std::to_string(skip.lines) + " lines") +
          " of " + skip.file + " were not shipped: " + skip.why;
      report(text);
      warnings_.push_back(Warning{text, std::nullopt});
    }
    if (!warnings_.empty()) {
      const RelpClient::SendResult r = client_.send(
          rfc5424::header(options_.facility, rfc5424::kWarning, "-", hostname_, options_.appName,
                          pid_) + warnings_.front().text,
          nextTag_);
      if (r != RelpClient::SendResult::kQueued) break;
      sent_->push_back(Sent{nextTag_++, false, 0, warnings_.front().after});
      warnings_.pop_front();
      continue;
    }
    const std::optional<std::string_view> line = follower_.peek();
    if (!line) break;
    if (nextLine_ >= savedHorizon_) {
      // Write-ahead: the state must say how far lines may have gone. It is
      // moved only once a quarter of the window is free, so that it is
      // written once per window/4 acknowledgements, not once per line.
      const uint64_t window = options_.relp.window;
      if (state_.ackedLines + window < nextLine_ + std::max<uint64_t>(1, window / 4)) break;
      state_.horizon = state_.ackedLines + window;
      saveState(true);
      if (nextLine_ >= savedHorizon_) break;
    }
    if (follower_.currentFile() != hostFile_) {
      hostFile_ = follower_.currentFile();
      hostAndPid(fileNameOf(options_.basename), hostFile_, &hostname_, &pid_);
    }
    const RelpClient::SendResult r = client_.send(
        rfc5424::formatLine(*line, options_.facility, hostname_, options_.appName, pid_,
                            Logger::timeZone()),
        nextTag_);
    if (r == RelpClient::SendResult::kTooLarge) {
      LogPosition after;
      follower_.pop(&after);
      ++state_.skipped;
      skipped_ = state_.skipped;
      const std::string text = "muon-ship: 1 line of " + after.file + " was not shipped: longer than " +
                               std::to_string(options_.relp.maxMessageBytes) + " bytes";
      report(text);
      warnings_.push_back(Warning{text, after});
      continue;
    }
    if (r != RelpClient::SendResult::kQueued) break;
    Sent sent{nextTag_++, true, nextLine_, LogPosition()};
    follower_.pop(&*sent.after);
    if (nextLine_ < restartResendUntil_) ++resentByRestart_;
    ++nextLine_;
    sent_->push_back(std::move(sent));
  }
  inFlight_ = sent_->size();
  if (options_.pin) {
    options_.pin->set(state_.acked.file.empty() ? follower_.currentFile() : state_.acked.file);
  }
}

void LogShipper::onAck(uint64_t tag) {
  while (!sent_->empty() && sent_->front().tag <= tag) {
    Sent& s = sent_->front();
    if (s.isLine) state_.ackedLines = s.line + 1;
    if (s.after) state_.acked = *s.after;
    sent_->pop_front();
    dirty_ = true;
  }
  shipped_ = state_.ackedLines;
  inFlight_ = sent_->size();
  pump();
}

void LogShipper::saveState(bool force) {
  state_.resent = resentBase_ + resentByRestart_ + client_.counters().framesResent;
  resent_ = state_.resent;
  if (options_.stateFile.empty() || (!dirty_ && !force)) return;
  std::string error;
  if (!state_.save(options_.stateFile, &error)) {
    if (!saveFailed_) report(error);
    saveFailed_ = true;
    return;
  }
  if (saveFailed_) report("state file " + options_.stateFile + " written again");
  saveFailed_ = false;
  dirty_ = false;
  savedHorizon_ = state_.horizon;
}

void LogShipper::stop(std::function<void(bool clean)> done) {
  loop_->assertInLoopThread();
  stopping_ = true;
  stopped_ = std::move(done);
  client_.close();
}

LogShipperCounters LogShipper::counters() const {
  LogShipperCounters c;
  c.shipped = shipped_.load(std::memory_order_relaxed);
  c.resent = resent_.load(std::memory_order_relaxed);
  c.skipped = skipped_.load(std::memory_order_relaxed);
  return c;
}

size_t LogShipper::inFlight() const { return inFlight_.load(std::memory_order_relaxed); }

void LogShipper::report(const std::string& what) {
  if (errorCallback_) {
    errorCallback_(what);
  } else {
    LOG_WARN << "LogShipper " << options_.basename << ": " << what;
  }
}

}  // namespace relp
}  // namespace net
}  // namespace muon
