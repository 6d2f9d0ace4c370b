// JournaldSink: sends muon's records to systemd-journald over its native
// protocol, one datagram an entry, so that `journalctl` shows each line with
// its level, source location, thread and fields as journal fields.
//
//   muon::JournaldSink journal;                 // /run/systemd/journal/socket
//   auto attached = muon::Logger::attach(journal);
//   LOG_WARN << "disk full" << muon::kv("free", 0);
//   // journalctl -o verbose: MESSAGE=disk full, PRIORITY=4, CODE_FILE=...,
//   //                        CODE_LINE=..., TID=..., FREE=0
//
// The entry's fields are JournalFormat.h's (internal): MESSAGE, PRIORITY
// (the level's syslog severity), SYSLOG_IDENTIFIER, SYSLOG_TIMESTAMP (the
// record's time, RFC 3339 UTC), TID, CODE_FILE, CODE_LINE, CODE_FUNC where
// known, and every muon::kv and LogContext field, its name upper-cased with
// everything outside [A-Z0-9_] as '_' ("trace.id" is TRACE_ID). Values with
// newlines, control bytes or bytes that are not UTF-8 go in the protocol's
// binary form, whole; an entry too large for one datagram goes in a sealed
// memfd passed over the socket (SCM_RIGHTS), as journald accepts.
//
// A missing, dead or slow journald never blocks a logging thread: append()
// only queues the record (QueuedSink.h: a bounded queue whose mutex the
// sender holds only to swap the queue for its emptied batch, never during
// I/O); the sender encodes and sends. A full queue drops the new entry
// (counted: `dropped`). The sender waits at most sendTimeoutMs for
// journald to take an entry (its socket's queue full); an entry it cannot
// send (no socket, the connection refused, the wait over) is counted `lost`
// with the rest of its batch, and the sender tries again retryMs later,
// connecting anew, so that a journald that was restarted is found again.
// Each outage is reported once: a line on stderr when it begins, and once
// journald takes entries again, an entry (PRIORITY 4) that says how many
// lines were dropped and lost since the last such report (drops by a full
// queue while journald takes entries: at most one report a second). What stays
// uncounted: the entries journald's socket had taken when journald died
// (at most its queue, net.unix.max_dgram_qlen datagrams).
//
// Thread safety: append(), flush() and stats() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "muon/base/Logging.h"
#include "muon/base/QueuedSink.h"

namespace muon {

struct LogRecord;

// queueCapacity, sendTimeoutMs and flushTimeoutMs are QueuedSinkOptions's:
// past queueCapacity, append() drops the new entry.
struct JournaldOptions : QueuedSinkOptions {
  // journald's native socket.
  std::string socketPath = "/run/systemd/journal/socket";
  // SYSLOG_IDENTIFIER; empty: the program's name
  // (program_invocation_short_name).
  std::string identifier;
  // After a failure, the sender waits this long before it tries again:
  // entries queued meanwhile go then, or are lost if journald is still away.
  int retryMs = 100;
};

class JournaldSink : public QueuedSink {
 public:
  using Options = JournaldOptions;
  explicit JournaldSink(JournaldOptions options = JournaldOptions());
  // Sends what is queued (waiting at most flushTimeoutMs and one send),
  // then stops the sender: what it did not send is counted lost.
  ~JournaldSink();

  // append(record), append(line, len) and flush() are QueuedSink's. A line
  // that did not come from Logger goes as MESSAGE, PRIORITY 5 (notice).

  // sent, dropped, lost (QueuedSinkStats), and:
  struct Stats : QueuedSinkStats {
    uint64_t viaMemfd = 0;  // of those sent, sent in a memfd (too large for a datagram)
    uint64_t outages = 0;   // times journald stopped taking entries
  };
  Stats stats() const;

  const std::string& socketPath() const { return options_.socketPath; }

 private:
  // The entry of a queued line, into *entry.
  void encodeQueued(const Lines& batch, const Lines::Line& line, std::string* entry) const;
  void senderLoop();
  // Sends the batch's entries in order until one fails; how many went.
  size_t sendBatch(const Lines& batch, std::string* entry, int* error);
  // Sends one entry, connecting first if there is no connection; false if
  // journald did not take it (*error says why).
  bool sendEntry(const char* p, size_t n, int* error);
  bool sendViaMemfd(const char* p, size_t n, int* error);
  bool connectSocket(int* error);
  void closeSocket();
  // The entry that reports the losses since the last report, if any.
  void reportLosses();

  const JournaldOptions options_;
  const std::string identifier_;

  std::atomic<uint64_t> viaMemfd_{0};
  std::atomic<uint64_t> outages_{0};

  // Sender thread only.
  int fd_ = -1;  // connected to socketPath
  uint64_t reportedDropped_ = 0;
  uint64_t reportedLost_ = 0;
  bool down_ = false;  // in an outage
  std::chrono::steady_clock::time_point lastReport_;
};

// The journal as a program's output when its environment asks for it:
// MUON_LOG_JOURNAL=1 (in a service's unit file, Environment=MUON_LOG_JOURNAL=1)
// makes a JournaldSink with `options` the program's only output for as long
// as the returned object lives; unset, empty or 0, nothing changes (stdout,
// with its <N> prefix under systemd). Any other value is reported on stderr
// and changes nothing. Call it once, in main(), before the lines that
// should go there:
//   auto journal = muon::useJournalIfRequested();
class RequestedJournal {
 public:
  RequestedJournal() = default;
  explicit RequestedJournal(const JournaldOptions& options)
      : sink_(std::make_unique<JournaldSink>(options)), attachment_(Logger::attach(*sink_)) {}
  // Whether the journal is the output now.
  bool active() const { return sink_ != nullptr; }
  // The sink, for its stats(); nullptr when not active.
  JournaldSink* sink() const { return sink_.get(); }

 private:
  std::unique_ptr<JournaldSink> sink_;  // outlives the attachment: declared first
  LogAttachment attachment_;
};
RequestedJournal useJournalIfRequested(const JournaldOptions& options = JournaldOptions());

}  // namespace muon
