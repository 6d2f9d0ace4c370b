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
// Transports: a UNIX datagram socket (/dev/log by default), UDP, or TCP with
// octet counting (RFC 6587: "LEN SP MESSAGE"); numeric IPv4 addresses.
//
// A dead or slow daemon never blocks a logging thread: append() copies the
// line into a bounded queue under a mutex that is held only to move lines in
// or out, never during I/O, and drops the line (counted) when the queue is
// full. One sender thread does all the I/O. When a send fails the message is
// counted as lost and, for TCP and UNIX sockets, the sender reconnects with
// exponential back-off. After losses it sends, once it can, one message
// (severity warning) saying how many lines were dropped and lost since the
// last such report; stats() has the totals. A TCP message the kernel accepted
// before the daemon died may be lost without being counted: TCP syslog has no
// acknowledgement.
//
// Thread safety: append(), flush() and stats() from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "muon/base/FlushTickets.h"

namespace muon {

struct LogRecord;

struct SyslogOptions {
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
  // Lines waiting for the sender; past that, append() drops. 10,000 lines is
  // a few MB at most, and seconds of a busy server's output.
  size_t queueCapacity = 10000;
  // Reconnect back-off: doubles from the first to the most after each
  // failed attempt, back to the first after a success.
  int firstRetryMs = 100;
  int maxRetryMs = 5000;
  // flush() waits at most this long: a FATAL line must not hang on a dead
  // daemon.
  int flushTimeoutMs = 1000;
};

class SyslogSink {
 public:
  explicit SyslogSink(SyslogOptions options);
  // Sends what is queued (waiting at most flushTimeoutMs), then stops the
  // sender thread.
  ~SyslogSink();
  SyslogSink(const SyslogSink&) = delete;
  SyslogSink& operator=(const SyslogSink&) = delete;

  // Queues one record (Logger::attach calls this); drops it, counted, if
  // the queue is full.
  void append(const LogRecord& record);
  // Queues a line that did not come from Logger (ending in '\n' or not):
  // sent whole as MSG, with severity notice and no time ("-": the daemon
  // stamps it).
  void append(const char* line, size_t len);
  // Waits until every line queued before the call has been sent or counted
  // lost, or flushTimeoutMs has passed.
  void flush();

  struct Stats {
    uint64_t sent = 0;        // messages handed to the socket
    uint64_t dropped = 0;     // lines refused because the queue was full
    uint64_t lost = 0;        // messages whose send failed
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
  void senderLoop();
  // Opens and connects the socket; false if it cannot (errno kept).
  bool connectSocket();
  void closeSocket();
  // Sends one formatted message with the transport's framing.
  bool sendMessage(const std::string& message);
  // Sends the drop/loss report if there is something to report.
  void reportLosses();

  const SyslogOptions options_;
  std::string hostname_;
  std::string appName_;
  const pid_t pid_;

  // A stored record (detail::storeRecord) or a line that did not come from
  // Logger.
  struct Queued {
    std::unique_ptr<char[]> bytes;
    size_t size;
    bool isRecord;
  };
  // Queues `item`, or drops it if the queue is full.
  void enqueue(Queued item);

  mutable std::mutex mutex_;
  std::condition_variable senderCond_;  // a line queued, or stop
  std::deque<Queued> queue_;            // guarded by mutex_
  FlushTickets tickets_;                // guarded by mutex_: one per line queued
  bool stopping_ = false;               // guarded by mutex_

  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> lost_{0};
  std::atomic<uint64_t> reconnects_{0};

  // Sender thread only.
  int fd_ = -1;
  bool everConnected_ = false;
  int retryMs_;
  uint64_t reportedDropped_ = 0;
  uint64_t reportedLost_ = 0;

  std::thread sender_;
};

}  // namespace muon
