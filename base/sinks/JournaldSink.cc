#include "muon/base/JournaldSink.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "muon/base/LogRecord.h"
#include "muon/base/internal/FileIo.h"
#include "muon/base/SyslogFormat.h"
#include "muon/base/internal/JournalFormat.h"

namespace muon {

namespace {

// Errors that say the connection's journald is gone: connect anew.
bool connectionGone(int error) {
  return error == ECONNREFUSED || error == ENOTCONN || error == EPIPE || error == ECONNRESET ||
         error == ENOENT || error == EDESTADDRREQ;
}


}  // namespace

RequestedJournal useJournalIfRequested(const JournaldOptions& options) {
  const char* value = std::getenv("MUON_LOG_JOURNAL");
  const std::string v = value == nullptr ? "" : value;
  if (v == "1") return RequestedJournal(options);
  if (!v.empty() && v != "0") {
    std::fprintf(stderr, "muon: MUON_LOG_JOURNAL='%s' is neither 1 nor 0: the output stays as it is\n",
                 v.c_str());
  }
  return RequestedJournal();
}

JournaldSink::JournaldSink(JournaldOptions options)
    : QueuedSink(options, false),  // a full queue drops the new entry
      options_(std::move(options)),
      identifier_(options_.identifier.empty() ? program_invocation_short_name
                                              : options_.identifier) {
  startSender([this] { senderLoop(); });
}

JournaldSink::~JournaldSink() {
  stopSender();
  closeSocket();
}

void JournaldSink::encodeQueued(const Lines& batch, const Lines::Line& line,
                                std::string* entry) const {
  if (line.isRecord) {
    journal::encodeRecord(detail::loadRecord(batch.data(line)), identifier_, entry);
  } else {
    journal::encodeLine(std::string_view(batch.data(line), line.size), identifier_, entry);
  }
}

JournaldSink::Stats JournaldSink::stats() const {
  Stats s;
  static_cast<QueuedSinkStats&>(s) = counts();
  s.viaMemfd = viaMemfd_.load(std::memory_order_relaxed);
  s.outages = outages_.load(std::memory_order_relaxed);
  return s;
}

size_t JournaldSink::sendBatch(const Lines& batch, std::string* entry, int* error) {
  size_t sent = 0;
  for (size_t i = batch.first; i < batch.lines.size() && !stopping(); ++i) {
    encodeQueued(batch, batch.lines[i], entry);
    if (!sendEntry(entry->data(), entry->size(), error)) break;
    ++sent;
  }
  return sent;
}

void JournaldSink::senderLoop() {
  Lines batch;
  std::string entry;  // the one being sent; its memory kept
  while (takeBatch(&batch)) {
    int error = 0;
    const size_t sent = sendBatch(batch, &entry, &error);
    const bool failed = sent < batch.size();
    countSent(sent);
    countLost(batch.size() - sent);
    // The outage is counted and said before the batch is done: a flush()
    // that returns has seen both.
    if (failed && !down_ && !stopping()) {
      down_ = true;
      outages_.fetch_add(1, std::memory_order_relaxed);
      std::fprintf(stderr,
                   "muon: journald at %s does not take log entries (%s); they are counted lost "
                   "until it does\n",
                   options_.socketPath.c_str(), std::strerror(error));
    }
    batchDone(&batch);
    if (failed) {
      rest(options_.retryMs);
      continue;
    }
    // Losses are reported once journald is back; drops by a full queue
    // while it takes entries, at most once a second.
    const bool back = down_;
    down_ = false;
    const auto now = std::chrono::steady_clock::now();
    const QueuedSinkStats counted = counts();
    if ((counted.dropped > reportedDropped_ || counted.lost > reportedLost_) &&
        (back || now - lastReport_ >= std::chrono::seconds(1))) {
      lastReport_ = now;
      reportLosses();
    }
  }
}

void JournaldSink::reportLosses() {
  const QueuedSinkStats now = counts();
  const uint64_t droppedSince = now.dropped - reportedDropped_;
  const uint64_t lostSince = now.lost - reportedLost_;
  const std::string text = "muon: " + std::to_string(droppedSince + lostSince) +
                           " log lines did not reach journald (" + std::to_string(droppedSince) +
                           " dropped by a full queue, " + std::to_string(lostSince) +
                           " lost while journald did not take them)";
  std::string entry;
  journal::encodeLine(text, identifier_, &entry, rfc5424::kWarning);
  int error = 0;
  if (!sendEntry(entry.data(), entry.size(), &error)) return;  // the next success reports
  reportedDropped_ = now.dropped;
  reportedLost_ = now.lost;
}

bool JournaldSink::connectSocket(int* error) {
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (options_.socketPath.size() >= sizeof addr.sun_path) {
    *error = ENAMETOOLONG;
    return false;
  }
  std::memcpy(addr.sun_path, options_.socketPath.data(), options_.socketPath.size());
  // Blocking, with a send timeout: a send into journald's full queue sleeps
  // in the kernel until there is room (one call, no poll and retry), for at
  // most sendTimeoutMs.
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    *error = errno;
    return false;
  }
  struct timeval timeout = {};
  timeout.tv_sec = options_.sendTimeoutMs / 1000;
  timeout.tv_usec = (options_.sendTimeoutMs % 1000) * 1000;
  if (::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0) {
    *error = errno;
    closeSocket();
    return false;
  }
  if (::connect(fd_, reinterpret_cast<const struct sockaddr*>(&addr), sizeof addr) != 0) {
    *error = errno;
    closeSocket();
    return false;
  }
  return true;
}

void JournaldSink::closeSocket() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool JournaldSink::sendEntry(const char* p, size_t n, int* error) {
  bool reconnected = false;
  for (;;) {
    if (fd_ < 0) {
      if (!connectSocket(error)) return false;
      reconnected = true;
    }
    if (::send(fd_, p, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n)) return true;
    const int e = errno;
    if (e == EINTR) continue;
    if (e == EMSGSIZE || e == ENOBUFS) return sendViaMemfd(p, n, error);
    if (e == EAGAIN || e == EWOULDBLOCK) {
      // SO_SNDTIMEO passed with journald's queue still full: it is not
      // reading. The connection stays: it is alive.
      *error = ETIMEDOUT;
      return false;
    }
    *error = e;
    closeSocket();
    // A journald restarted since this connection was made: once more, anew.
    if (!connectionGone(e) || reconnected) return false;
  }
}

bool JournaldSink::sendViaMemfd(const char* p, size_t n, int* error) {
  const int memfd = ::memfd_create("muon-journal-entry", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (memfd < 0) {
    *error = errno;
    return false;
  }
  int e = writeToFd(memfd, p, n);
  if (e == 0 &&
      ::fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    e = errno;
  }
  if (e == 0) {
    union {
      struct cmsghdr header;
      char bytes[CMSG_SPACE(sizeof(int))];
    } control = {};
    struct msghdr msg = {};
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof control.bytes;
    struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &memfd, sizeof(int));
    if (::sendmsg(fd_, &msg, MSG_NOSIGNAL) < 0) e = errno;
  }
  const bool ok = e == 0;
  if (!ok) *error = e;
  ::close(memfd);
  if (ok) viaMemfd_.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

}  // namespace muon
