#include "muon/base/SyslogSink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "muon/base/LogRecord.h"
#include "muon/base/SyslogFormat.h"

namespace muon {

namespace {

std::string defaultHostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "-";
  return name;
}

// Whether an IPv4 socket is connected to its own address: what a connect to
// a port nobody holds can end in when the kernel picks that very port as the
// socket's own (UDP always; TCP by simultaneous open). Messages then go
// nowhere while every send succeeds.
bool connectedToItself(int fd) {
  struct sockaddr_in local = {};
  struct sockaddr_in peer = {};
  socklen_t localLen = sizeof local;
  socklen_t peerLen = sizeof peer;
  if (::getsockname(fd, reinterpret_cast<struct sockaddr*>(&local), &localLen) != 0 ||
      ::getpeername(fd, reinterpret_cast<struct sockaddr*>(&peer), &peerLen) != 0) {
    return false;
  }
  return local.sin_port == peer.sin_port && local.sin_addr.s_addr == peer.sin_addr.s_addr;
}

int millisecondsUntil(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

}  // namespace

std::string SyslogSink::format(const LogRecord& record, int facility,
                               const std::string& hostname, const std::string& appName,
                               pid_t pid) {
  return rfc5424::formatRecord(record, facility, hostname, appName, pid);
}

std::string SyslogSink::format(const char* line, size_t len, int facility,
                               const std::string& hostname, const std::string& appName,
                               pid_t pid) {
  if (len > 0 && line[len - 1] == '\n') --len;
  std::string out = rfc5424::header(facility, rfc5424::kNotice, "-", hostname, appName, pid);
  out.append(line, len);
  return out;
}

SyslogSink::SyslogSink(SyslogOptions options)
    : QueuedSink(options, options.overflow == SyslogOptions::kDropOldest),
      options_(std::move(options)),
      hostname_(options_.hostname.empty() ? defaultHostname() : options_.hostname),
      appName_(options_.appName.empty() ? program_invocation_short_name : options_.appName),
      pid_(::getpid()),
      retryMs_(options_.firstRetryMs) {
  startSender([this] { senderLoop(); });
}

SyslogSink::~SyslogSink() {
  stopSender();
  closeSocket();
}

SyslogSink::Stats SyslogSink::stats() const {
  Stats s;
  static_cast<QueuedSinkStats&>(s) = counts();
  s.reconnects = reconnects_.load(std::memory_order_relaxed);
  return s;
}

void SyslogSink::senderLoop() {
  Lines batch;
  while (takeBatch(&batch)) {
    // Lines that cannot be sent now are lost rather than kept: the queue
    // fills with newer ones meanwhile, and those are the ones worth sending.
    const bool reachable = sendBatch(batch);
    if (reachable) {
      retryMs_ = options_.firstRetryMs;
      if (!stopping()) reportLosses();
    }
    batchDone(&batch);
    if (!reachable) {
      rest(retryMs_);
      retryMs_ = std::min(retryMs_ * 2, options_.maxRetryMs);
    }
  }
}

std::string SyslogSink::formatQueued(const Lines& batch, const Lines::Line& line) const {
  const char* bytes = batch.data(line);
  return line.isRecord
             ? format(detail::loadRecord(bytes), options_.facility, hostname_, appName_, pid_)
             : format(bytes, line.size, options_.facility, hostname_, appName_, pid_);
}

void SyslogSink::paceDatagram() {
  using std::chrono::milliseconds;
  auto now = std::chrono::steady_clock::now();
  if (now >= paceWindow_ + milliseconds(1)) {
    paceWindow_ = now;
    pacedInWindow_ = 0;
  }
  if (pacedInWindow_ >= options_.udpCatchUpDatagramsPerMs) {
    std::this_thread::sleep_until(paceWindow_ + milliseconds(1));
    paceWindow_ = std::chrono::steady_clock::now();
    pacedInWindow_ = 0;
  }
  ++pacedInWindow_;
}

bool SyslogSink::sendBatch(const Lines& batch) {
  // A daemon that died while the sender was idle has closed the connection;
  // writing into it would be accepted by the kernel and lost uncounted.
  if (fd_ >= 0 && options_.transport == SyslogOptions::kTcp && peerHungUp()) closeSocket();
  const bool udp = options_.transport == SyslogOptions::kUdp;
  // Caught up once a whole batch fits in one millisecond's budget, or
  // kMaxCatchUpMs after the last failure: a program that logs faster than
  // the pace would otherwise be held to it for good.
  if (catchingUp_ &&
      (batch.size() <= static_cast<size_t>(options_.udpCatchUpDatagramsPerMs) ||
       std::chrono::steady_clock::now() - catchUpSince_ > std::chrono::milliseconds(kMaxCatchUpMs))) {
    catchingUp_ = false;
  }
  const bool pace = udp && catchingUp_ && options_.udpCatchUpDatagramsPerMs > 0;
  bool retried = false;
  size_t next = batch.first;
  // Once the destructor stops waiting, the I/O under way is the last.
  while (next < batch.lines.size() && !stopping()) {
    if (fd_ < 0 && (!connectSocket() || stopping())) break;
    if (pace) paceDatagram();
    const SendResult result = sendMessage(formatQueued(batch, batch.lines[next]));
    if (result == kSent || result == kTooLong) {
      // A datagram too long for the transport says nothing of the daemon:
      // that line alone is lost.
      if (result == kSent) {
        countSent(1);
      } else {
        countLost(1);
      }
      ++next;
      continue;
    }
    const bool keep = keepsSocket(result);
    if (!keep) closeSocket();
    // A connection that went away (the daemon restarted) is replaced at
    // once and the line tried again, once a batch; a timeout or a refusal
    // means the daemon is not there to take it.
    if (result == kFailed && !keep && !retried) {
      retried = true;
      continue;
    }
    break;
  }
  countLost(batch.lines.size() - next);
  const bool reachable = next == batch.lines.size();
  if (!reachable && udp) {
    // What comes next is paced, kMaxCatchUpMs at most from the last
    // failure (about the daemon's return).
    catchingUp_ = true;
    catchUpSince_ = std::chrono::steady_clock::now();
  }
  return reachable;
}

bool SyslogSink::connectSocket() {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.sendTimeoutMs);
  int fd = -1;
  int rc = -1;
  if (options_.transport == SyslogOptions::kUnixDatagram) {
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    if (fd < 0 || options_.path.size() >= sizeof addr.sun_path) {
      if (fd >= 0) ::close(fd);
      return false;
    }
    std::memcpy(addr.sun_path, options_.path.data(), options_.path.size());
    rc = ::connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr);
  } else {
    const bool tcp = options_.transport == SyslogOptions::kTcp;
    fd = ::socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(options_.port);
    if (fd < 0 || ::inet_pton(AF_INET, options_.host.c_str(), &addr.sin_addr) != 1) {
      if (fd >= 0) ::close(fd);
      return false;
    }
    rc = ::connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr);
    if (tcp && rc != 0 && errno == EINPROGRESS) {
      struct pollfd p = {fd, POLLOUT, 0};
      int err = ETIMEDOUT;
      socklen_t errLen = sizeof err;
      if (::poll(&p, 1, millisecondsUntil(deadline)) == 1) {
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errLen);
      }
      rc = err == 0 ? 0 : -1;
    }
    if (rc == 0 && connectedToItself(fd)) {
      // Closed with a reset, not into TIME_WAIT: the port is the daemon's
      // and must be free for it at once.
      struct linger abort = {1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
      rc = -1;
    }
  }
  if (rc != 0) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  if (everConnected_) reconnects_.fetch_add(1, std::memory_order_relaxed);
  everConnected_ = true;
  return true;
}

void SyslogSink::closeSocket() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  unsent_.clear();  // a message cut with its connection
}

bool SyslogSink::peerHungUp() const {
  struct pollfd p = {fd_, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

SyslogSink::SendResult SyslogSink::sendMessage(const std::string& message) {
  const bool tcp = options_.transport == SyslogOptions::kTcp;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.sendTimeoutMs);
  if (tcp && !unsent_.empty()) {
    // First the rest of the message a timeout cut, which the stream owes.
    std::string rest;
    rest.swap(unsent_);
    const SendResult result = sendBytes(rest, deadline, true);
    if (result != kSent) return result;
  }
  if (!tcp) return sendBytes(message, deadline, false);
  return sendBytes(std::to_string(message.size()) + ' ' + message, deadline, false);
}

SyslogSink::SendResult SyslogSink::sendBytes(const std::string& bytes,
                                             std::chrono::steady_clock::time_point deadline,
                                             bool owed) {
  const std::string* out = &bytes;
  const bool tcp = options_.transport == SyslogOptions::kTcp;
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t n =
        ::send(fd_, out->data() + done, out->size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      // A datagram goes whole or not at all.
      if (!tcp && done != out->size()) return kFailed;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The daemon is not taking it (not reading, or its buffers are full).
      const int left = millisecondsUntil(deadline);
      if (left == 0) {
        // A TCP stream keeps its frames whole: the rest of a frame begun
        // (now, or by an earlier send: `owed`) goes first next time.
        if (tcp && (done > 0 || owed)) unsent_.assign(*out, done, std::string::npos);
        return kTimedOut;
      }
      struct pollfd p = {fd_, POLLOUT, 0};
      ::poll(&p, 1, left);
      continue;
    }
    return n < 0 && errno == EMSGSIZE ? kTooLong : kFailed;
  }
  return kSent;
}

bool SyslogSink::keepsSocket(SendResult result) const {
  switch (options_.transport) {
    case SyslogOptions::kUdp:
      return true;  // a refusal reports the daemon's absence, not the socket's
    case SyslogOptions::kUnixDatagram:
      return result != kFailed;  // the daemon's socket went away
    case SyslogOptions::kTcp:
      // A daemon that stopped reading keeps its connection (sendTimeoutMs);
      // after a failed send the stream is out of step.
      return result == kTimedOut;
  }
  return false;
}

void SyslogSink::reportLosses() {
  const QueuedSinkStats now = counts();
  if (now.dropped == reportedDropped_ && now.lost == reportedLost_) return;
  const std::string text = "muon: " + std::to_string(now.dropped - reportedDropped_) +
                           " lines dropped (queue full) and " +
                           std::to_string(now.lost - reportedLost_) +
                           " lost (daemon unreachable) since the last report";
  const std::string message =
      rfc5424::header(options_.facility, rfc5424::kWarning, "-", hostname_, appName_, pid_) + text;
  const SendResult result = sendMessage(message);
  if (result == kSent) {
    reportedDropped_ = now.dropped;
    reportedLost_ = now.lost;
  } else if (!keepsSocket(result)) {
    closeSocket();
  }
}

}  // namespace muon
