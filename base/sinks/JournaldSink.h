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
// copies the record (detail::storeRecord) into a bounded queue under a
// mutex that the sender thread holds only to swap the queue for its emptied
// batch, never during I/O; the sender encodes and sends. A full queue drops the new entry
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

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "muon/base/Logging.h"

namespace muon {

struct LogRecord;

struct JournaldOptions {
  // journald's native socket.
  std::string socketPath = "/run/systemd/journal/socket";
  // SYSLOG_IDENTIFIER; empty: the program's name
  // (program_invocation_short_name).
  std::string identifier;
  // Entries waiting for the sender; past that, append() drops the new one.
  // 10,000 entries is a few MB at most: seconds of a busy server's lines.
  size_t queueCapacity = 10000;
  // The most the sender waits for journald to take one entry (its socket's
  // queue full: journald busy or stopped) before it counts the batch lost.
  int sendTimeoutMs = 1000;
  // After a failure, the sender waits this long before it tries again:
  // entries queued meanwhile go then, or are lost if journald is still away.
  int retryMs = 100;
  // flush() waits at most this long (a FATAL line must not hang on a
  // stalled journald); so does the destructor, before it counts what is
  // left as lost.
  int flushTimeoutMs = 1000;
};

class JournaldSink {
 public:
  using Options = JournaldOptions;
  explicit JournaldSink(JournaldOptions options = JournaldOptions());
  // Sends what is queued (waiting at most flushTimeoutMs and one send),
  // then stops the sender: what it did not send is counted lost.
  ~JournaldSink();
  JournaldSink(const JournaldSink&) = delete;
  JournaldSink& operator=(const JournaldSink&) = delete;

  // Queues the entry of one record (Logger::attach calls this).
  void append(const LogRecord& record);
  // Queues a line that did not come from Logger: MESSAGE the line,
  // PRIORITY 5 (notice).
  void append(const char* line, size_t len);
  // Waits until every entry queued before the call has been sent or
  // counted, or flushTimeoutMs has passed.
  void flush();

  struct Stats {
    uint64_t sent = 0;      // entries journald's socket took
    uint64_t viaMemfd = 0;  // of those, sent in a memfd (too large for a datagram)
    uint64_t dropped = 0;   // entries dropped because the queue was full
    uint64_t lost = 0;      // entries not sent: journald missing, refusing or not reading
    uint64_t outages = 0;   // times journald stopped taking entries
  };
  Stats stats() const;

  const std::string& socketPath() const { return options_.socketPath; }

 private:
  // Lines in order, their bytes one after another: a stored record
  // (detail::storeRecord) or a line that did not come from Logger. The
  // queue and the sender's batch are two of these, swapped whole, so their
  // memory is reused.
  struct Entries {
    struct End {
      size_t offset;  // where the next one begins
      bool isRecord;
    };
    std::vector<char> bytes;
    std::vector<End> ends;
    void clear() {
      bytes.clear();
      ends.clear();
    }
  };
  // Queues `size` bytes that `write` writes into the room made for them.
  template <typename Write>
  void enqueue(size_t size, bool isRecord, Write write);
  // The entry of a queued line, into *entry.
  void encodeQueued(const char* p, size_t n, bool isRecord, std::string* entry) const;
  void senderLoop();
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
  int fd_ = -1;  // the sender's; connected to socketPath

  mutable std::mutex mutex_;
  std::condition_variable senderCond_;  // an entry queued, or stop
  std::condition_variable doneCond_;    // entries done (sent or counted)
  Entries queue_;
  uint64_t queued_ = 0;  // entries ever queued (and dropped): flush()'s tickets
  uint64_t done_ = 0;    // of those, sent or counted
  bool stop_ = false;
  Stats stats_;
  uint64_t reportedDropped_ = 0;
  uint64_t reportedLost_ = 0;
  bool down_ = false;  // the sender's: in an outage
  std::chrono::steady_clock::time_point lastReport_;  // the sender's
  std::thread sender_;
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
