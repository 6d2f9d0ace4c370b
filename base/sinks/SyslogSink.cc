#include "muon/base/SyslogSink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "muon/base/LineLayout.h"
#include "muon/base/LogRecord.h"
#include "muon/base/TimeZone.h"

namespace muon {

namespace {

// RFC 5424 severities.
constexpr int kCritical = 2;
constexpr int kError = 3;
constexpr int kWarning = 4;
constexpr int kNotice = 5;
constexpr int kInformational = 6;
constexpr int kDebug = 7;

// How long a TCP connect or a blocked TCP send may take before the sender
// gives up on the connection.
constexpr int kTcpTimeoutMs = 2000;

// The one place a level becomes a syslog severity.
int severityOf(Logger::LogLevel level) {
  switch (level) {
    case Logger::TRACE:
    case Logger::DEBUG:
      return kDebug;
    case Logger::INFO:
      return kInformational;
    case Logger::WARN:
      return kWarning;
    case Logger::ERROR:
      return kError;
    case Logger::FATAL:
      return kCritical;
    default:
      return kNotice;
  }
}

// RFC 3339 in UTC, to the microsecond: "2026-11-21T08:15:02.123456Z".
std::string utcTimestamp(Timestamp time) {
  const DateTime dt = TimeZone::toUtcTime(time.secondsSinceEpoch());
  const int year = std::clamp(dt.year, 0, 9999);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", year, dt.month, dt.day,
                dt.hour, dt.minute, dt.second, time.microSecondsInSecond());
  return buf;
}

// RFC 5424's header fields are printable ASCII without spaces, of bounded length.
std::string headerField(const std::string& value, size_t maxLength) {
  std::string field = value.substr(0, maxLength);
  for (char& c : field) {
    if (c <= ' ' || c > '~') c = '_';
  }
  return field.empty() ? "-" : field;
}

std::string defaultHostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "-";
  return name;
}

// "<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - - ", MSG to follow: no MSGID, no
// structured data.
std::string headerOf(int facility, int severity, const std::string& timestamp,
                     const std::string& hostname, const std::string& appName, pid_t pid) {
  return "<" + std::to_string(facility * 8 + severity) + ">1 " + timestamp + ' ' +
         headerField(hostname, 255) + ' ' + headerField(appName, 48) + ' ' +
         std::to_string(pid) + " - - ";
}

}  // namespace

std::string SyslogSink::format(const LogRecord& record, int facility,
                               const std::string& hostname, const std::string& appName,
                               pid_t pid) {
  std::string out = headerOf(facility, severityOf(record.level), utcTimestamp(record.time),
                             hostname, appName, pid);
  out += std::to_string(record.tid);
  out += ' ';
  detail::appendFromLevel(&out, record);
  return out;
}

std::string SyslogSink::format(const char* line, size_t len, int facility,
                               const std::string& hostname, const std::string& appName,
                               pid_t pid) {
  if (len > 0 && line[len - 1] == '\n') --len;
  std::string out = headerOf(facility, kNotice, "-", hostname, appName, pid);
  out.append(line, len);
  return out;
}

SyslogSink::SyslogSink(SyslogOptions options)
    : options_(std::move(options)),
      hostname_(options_.hostname.empty() ? defaultHostname() : options_.hostname),
      appName_(options_.appName.empty() ? program_invocation_short_name : options_.appName),
      pid_(::getpid()),
      retryMs_(options_.firstRetryMs) {
  sender_ = std::thread([this] { senderLoop(); });
}

SyslogSink::~SyslogSink() {
  flush();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  senderCond_.notify_one();
  sender_.join();
  closeSocket();
}

void SyslogSink::append(const LogRecord& record) {
  const size_t size = detail::storedSize(record);
  Queued item{std::unique_ptr<char[]>(new char[size]), size, true};
  detail::storeRecord(record, item.bytes.get());
  enqueue(std::move(item));
}

void SyslogSink::append(const char* line, size_t len) {
  Queued item{std::unique_ptr<char[]>(new char[len]), len, false};
  std::memcpy(item.bytes.get(), line, len);
  enqueue(std::move(item));
}

void SyslogSink::enqueue(Queued item) {
  bool wasEmpty;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= options_.queueCapacity) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    wasEmpty = queue_.empty();
    queue_.push_back(std::move(item));
    tickets_.issue();
  }
  // The sender waits only for an empty queue to fill; it looks again after
  // every batch, so later lines need no wake-up (and no futex call).
  if (wasEmpty) senderCond_.notify_one();
}

void SyslogSink::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  tickets_.waitFor(lock, tickets_.newest(), std::chrono::milliseconds(options_.flushTimeoutMs));
}

SyslogSink::Stats SyslogSink::stats() const {
  Stats s;
  s.sent = sent_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.lost = lost_.load(std::memory_order_relaxed);
  s.reconnects = reconnects_.load(std::memory_order_relaxed);
  return s;
}

void SyslogSink::senderLoop() {
  std::deque<Queued> batch;
  for (;;) {
    uint64_t batchEnd;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      senderCond_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left
      batch.swap(queue_);
      batchEnd = tickets_.newest();
    }
    size_t handled = 0;
    bool unreachable = false;
    for (const Queued& item : batch) {
      if (fd_ < 0 && !connectSocket()) {
        unreachable = true;
        break;
      }
      const std::string message =
          item.isRecord ? format(detail::loadRecord(item.bytes.get()), options_.facility,
                                 hostname_, appName_, pid_)
                        : format(item.bytes.get(), item.size, options_.facility, hostname_,
                                 appName_, pid_);
      if (sendMessage(message)) {
        sent_.fetch_add(1, std::memory_order_relaxed);
      } else {
        lost_.fetch_add(1, std::memory_order_relaxed);
        closeSocket();  // reconnect for the next one
      }
      ++handled;
    }
    // Lines that cannot be sent now are lost: the queue keeps filling with
    // newer ones meanwhile, and those are the ones worth sending.
    lost_.fetch_add(batch.size() - handled, std::memory_order_relaxed);
    if (fd_ >= 0) reportLosses();
    bool stopping;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tickets_.markDone(batchEnd);
      stopping = stopping_;
    }
    batch.clear();
    if (unreachable && !stopping) {
      std::unique_lock<std::mutex> lock(mutex_);
      senderCond_.wait_for(lock, std::chrono::milliseconds(retryMs_), [&] { return stopping_; });
      retryMs_ = std::min(retryMs_ * 2, options_.maxRetryMs);
    }
  }
}

bool SyslogSink::connectSocket() {
  int fd = -1;
  int rc = -1;
  if (options_.transport == SyslogOptions::kUnixDatagram) {
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
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
    fd = ::socket(AF_INET, (tcp ? SOCK_STREAM | SOCK_NONBLOCK : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
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
      if (::poll(&p, 1, kTcpTimeoutMs) == 1) {
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errLen);
      }
      rc = err == 0 ? 0 : -1;
    }
    if (tcp && rc == 0) {
      // Blocking sends from here on, each bounded by the timeout.
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      struct timeval tv = {kTcpTimeoutMs / 1000, (kTcpTimeoutMs % 1000) * 1000};
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
  }
  if (rc != 0) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  if (everConnected_) reconnects_.fetch_add(1, std::memory_order_relaxed);
  everConnected_ = true;
  retryMs_ = options_.firstRetryMs;
  return true;
}

void SyslogSink::closeSocket() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

bool SyslogSink::sendMessage(const std::string& message) {
  std::string framed;
  const std::string* out = &message;
  if (options_.transport == SyslogOptions::kTcp) {
    framed = std::to_string(message.size()) + ' ' + message;
    out = &framed;
  }
  size_t done = 0;
  while (done < out->size()) {
    ssize_t n = ::send(fd_, out->data() + done, out->size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
    // A datagram goes whole or not at all.
    if (options_.transport != SyslogOptions::kTcp && done != out->size()) return false;
  }
  return true;
}

void SyslogSink::reportLosses() {
  const uint64_t dropped = dropped_.load(std::memory_order_relaxed);
  const uint64_t lost = lost_.load(std::memory_order_relaxed);
  if (dropped == reportedDropped_ && lost == reportedLost_) return;
  const std::string text = "muon: " + std::to_string(dropped - reportedDropped_) +
                           " lines dropped (queue full) and " +
                           std::to_string(lost - reportedLost_) +
                           " lost (daemon unreachable) since the last report";
  const std::string message =
      headerOf(options_.facility, kWarning, "-", hostname_, appName_, pid_) + text;
  if (sendMessage(message)) {
    reportedDropped_ = dropped;
    reportedLost_ = lost;
  } else {
    closeSocket();
  }
}

}  // namespace muon
