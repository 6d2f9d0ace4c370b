// SyslogSink: sends muon's lines to a syslog daemon as RFC 5424 messages,
// so that rsyslog (or any daemon) can forward them off the machine.
//
//   muon::SyslogSink syslog(muon::SyslogOptions{});   // /dev/log
//   auto attached = muon::Logger::attach(syslog);
//
// It takes LogRecords (LogRecord.h): a line logged as
//   20261121 16:15:02.123456  4321 WARN  disk full - df.cc:42   (in UTC+8)
// becomes
//   <12>1 2026-11-21T08:15:02.123456Z myhost server 4321 - - 4321 WARN  disk full - df.cc:42
// with the severity from the record's level (TRACE and DEBUG: debug, INFO:
// info, WARN: warning, ERROR: err, FATAL: crit), the time from the record,
// always in UTC, and as MSG the line without its date-time: the thread id,
// then everything from the level on, as the line has it.
//
// The message is made by SyslogFormat.h (rfc5424::), which the RELP shipper
// shares for lines read back from files.
//
// Transports: a UNIX datagram socket (/dev/log by default), UDP, or TCP with
// octet counting (RFC 6587: "LEN SP MESSAGE"); numeric IPv4 addresses.
//
// A dead or slow daemon never blocks a logging thread: append() only
// queues the line (QueuedSink.h: a bounded queue whose mutex the sender
// holds only to swap the queue for its emptied batch, never during I/O).
// When the queue is full one line is dropped (counted): by default the
// oldest queued one (SyslogOptions::overflow). One sender thread does all
// the I/O, on non-blocking sockets, and no send or connect waits longer
// than sendTimeoutMs.
//
// What a failure costs, by transport:
//  - A connection found dead (TCP: the daemon closed or reset it, seen before
//    each batch and on a failed send; UNIX: the daemon's socket went away)
//    is replaced at once and the line is sent again on the new one; if that
//    fails too the daemon counts as unreachable.
//  - Unreachable (no connection can be made, a send timed out, or UDP got a
//    refusal back): the line and the rest of its batch are counted lost and
//    the sender waits, with a back-off from firstRetryMs doubling to
//    maxRetryMs, before it tries again. UDP and UNIX datagram sockets are
//    kept through refusals and timeouts (only a new connection counts in
//    `reconnects`), and so is a TCP connection whose send timed out: the
//    daemon is alive but not reading, and a new connection would hand it
//    another socket buffer of lines; the rest of a message the timeout cut
//    is sent first once it reads again.
//  - Back after being unreachable, over UDP: the lines queued meanwhile go
//    at most udpCatchUpDatagramsPerMs a millisecond until a batch fits in
//    one millisecond's budget (for a second at most), so that a daemon just
//    restarted is not sent more than its receive buffer holds before it
//    reads.
//  - A line too long for a datagram (UDP's 64 KiB, a UNIX socket's send
//    buffer) is counted lost alone; the lines after it go on.
//  - A socket that connected to itself (the daemon's port is in the
//    ephemeral range and the kernel gave the sink that very port while no
//    daemon held it) is closed and counts as unreachable.
// After losses the sender sends, once it can, one message (severity
// warning) saying how many lines were dropped and lost since the last such
// report; stats() has the totals. What stays uncounted: a TCP message the
// kernel accepted before the daemon died (TCP syslog has no
// acknowledgement; a death in the middle of a batch, or of a stalled
// daemon, costs what one connection's buffers held), a UDP message sent
// before the daemon's refusal came back (one per back-off while it is down;
// loopback answers at once), and a UDP message the daemon's kernel dropped
// with its receive buffer full (no flow control; paced after an outage, but
// a daemon slower than the program still drops).
//
// The destructor waits for the queue at most flushTimeoutMs, then lets the
// sender finish the send or connect it is in (at most sendTimeoutMs more)
// and counts what is left as lost: it returns within about flushTimeoutMs +
// sendTimeoutMs however the daemon behaves.
//
// Thread safety: append(), flush() and stats() from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "muon/base/QueuedSink.h"

namespace muon {

struct LogRecord;

// queueCapacity, sendTimeoutMs and flushTimeoutMs are QueuedSinkOptions's.
struct SyslogOptions : QueuedSinkOptions {
  enum Transport { kUnixDatagram, kUdp, kTcp };
  Transport transport = kUnixDatagram;
  // kUnixDatagram: the daemon's socket.
  std::string path = "/dev/log";
  // kUdp, kTcp: the daemon's numeric IPv4 address and port.
  std::string host = "127.0.0.1";
  uint16_t port = 514;
  // RFC 5424 facility: 1 is user-level messages, 16..23 local0..local7.
  int facility = 1;
  // APP-NAME; empty: the program's name (program_invocation_short_name).
  std::string appName;
  // HOSTNAME; empty: gethostname().
  std::string hostname;
  // Which line a full queue drops. The default keeps the newest: the queue
  // fills only while the daemon is unreachable or too slow, and what an
  // operator reading the central log needs when it comes back is the lines
  // that lead up to the present, joined without a gap to the live ones that
  // follow; the outage itself shows as the warning with the counts (and the
  // local log file, if there is one, has everything). kDropNewest keeps the
  // start of the outage instead, for those who want a failure's first lines.
  enum Overflow { kDropOldest, kDropNewest };
  Overflow overflow = kDropOldest;
  // Back-off while the daemon is unreachable: doubles from the first to the
  // most after each failed attempt, back to the first once a batch got
  // through. Attempts are made only when lines wait. The cap bounds how
  // long a daemon that came back waits to be reached (at most maxRetryMs
  // after its return, plus one connect); a few cheap attempts a second
  // while it is down are the price.
  int firstRetryMs = 100;
  int maxRetryMs = 250;
  // UDP: the most datagrams sent in one millisecond while the sink catches
  // up after the daemon was unreachable (a restart): the lines queued
  // meanwhile (up to maxRetryMs of them) go at this pace, not in one burst,
  // which a receive buffer of a few hundred datagrams (Linux's default
  // 208 KiB; the daemon just started and may not read yet) drops without a
  // trace. 50 a millisecond (50,000 lines/s) drains a back-off's backlog of
  // a 20,000 lines/s program in a fifth of a second and gives a receiver
  // 5 ms to start reading before its buffer fills; pacing ends once a batch
  // fits in one millisecond's budget, or a second (kMaxCatchUpMs) after the
  // last failure, so that a program that logs near or above the pace is not
  // held to it for good. 0: no pacing.
  int udpCatchUpDatagramsPerMs = 50;
};

class SyslogSink : public QueuedSink {
 public:
  explicit SyslogSink(SyslogOptions options);
  // Sends what is queued (waiting at most flushTimeoutMs), then stops the
  // sender thread: what it could not send by then is counted lost. Returns
  // within about flushTimeoutMs + sendTimeoutMs.
  ~SyslogSink();

  // append(record), append(line, len) and flush() are QueuedSink's. A line
  // that did not come from Logger is sent whole as MSG, with severity
  // notice and no time ("-": the daemon stamps it).

  // sent, dropped, lost (QueuedSinkStats), and:
  struct Stats : QueuedSinkStats {
    uint64_t reconnects = 0;  // connections made after the first
  };
  Stats stats() const;

  // The RFC 5424 message for a record, and for a line that did not come
  // from Logger, without framing (for tests).
  static std::string format(const LogRecord& record, int facility, const std::string& hostname,
                            const std::string& appName, pid_t pid);
  static std::string format(const char* line, size_t len, int facility,
                            const std::string& hostname, const std::string& appName, pid_t pid);

 private:
  // The longest a catch-up over UDP paces (udpCatchUpDatagramsPerMs).
  static constexpr int kMaxCatchUpMs = 1000;
  void senderLoop();
  // Opens and connects the socket; false if it cannot.
  bool connectSocket();
  void closeSocket();
  // Whether the daemon closed or reset the TCP connection (it never writes
  // to it, so readable means that).
  bool peerHungUp() const;
  // kTooLong: a datagram longer than the transport takes (EMSGSIZE).
  enum SendResult { kSent, kTimedOut, kTooLong, kFailed };
  // Sends one formatted message with the transport's framing, waiting at
  // most sendTimeoutMs for the socket to take it.
  SendResult sendMessage(const std::string& message);
  // Sends `bytes` as they are, by `deadline`. `owed`: they are the rest of
  // a TCP frame already begun, kept whole for the next try if none goes.
  SendResult sendBytes(const std::string& bytes, std::chrono::steady_clock::time_point deadline,
                       bool owed);
  // Whether the socket stays after a failed send: a datagram socket is only
  // an address, except a UNIX one whose daemon went away.
  bool keepsSocket(SendResult result) const;
  // Sends the drop/loss report if there is something to report.
  void reportLosses();
  // Sends a batch in order; false if the daemon turned out unreachable, the
  // line that failed and the rest then counted lost.
  bool sendBatch(const Lines& batch);
  // The message for a queued line.
  std::string formatQueued(const Lines& batch, const Lines::Line& line) const;
  // UDP catching up: waits until the datagram budget of the current
  // millisecond has room for one more.
  void paceDatagram();

  const SyslogOptions options_;
  std::string hostname_;
  std::string appName_;
  const pid_t pid_;

  std::atomic<uint64_t> reconnects_{0};

  // Sender thread only.
  int fd_ = -1;
  bool everConnected_ = false;
  int retryMs_;
  // TCP: the rest of a message a send timed out in, sent before anything
  // else on the connection (which is kept: see sendTimeoutMs).
  std::string unsent_;
  // UDP: pacing after the daemon was unreachable (udpCatchUpDatagramsPerMs),
  // and the current millisecond's count.
  bool catchingUp_ = false;
  std::chrono::steady_clock::time_point catchUpSince_;  // the last failure before a catch-up
  std::chrono::steady_clock::time_point paceWindow_;
  int pacedInWindow_ = 0;
  uint64_t reportedDropped_ = 0;
  uint64_t reportedLost_ = 0;
};

}  // namespace muon
