// RelpClient: sends messages to one RELP server (rsyslog's imrelp) as
// `syslog` frames and reports, in the order they were given, those the
// server has acknowledged. Delivery is at least once: a frame is held until
// its "200" arrives; if the session breaks first (connection lost, an
// error response, garbage, `serverclose`, no answer within ackTimeoutMs),
// the client reconnects with a capped back-off, opens a new session and
// sends every held frame again, in order. A frame the server had taken but
// not yet acknowledged then arrives twice: counters().framesResent counts
// each frame sent again, an upper bound of the duplicates. What the client
// still holds when it is destroyed, or when close() runs out of time, was
// not acknowledged (held() says how much). docs/logging.md, "RELP client".
//
// Writes are batched: the frames made ready while the client handles what
// arrived on the connection (acknowledgements refilling the window, and
// whatever the ack callback sends) go out in one write at the end of that
// handling; frames given to send() elsewhere go out together once per loop
// iteration (after the current batch of events). The window is counted
// when a frame is numbered, not when it is written.
//
// Producers never block. The client holds at most RelpClientOptions::queueLimit
// frames (sent and unacknowledged, or waiting for room in the window);
// send() beyond that refuses the frame (kFull) and the resume callback
// says when to offer more. A reader of files simply stops reading there.
//
// Threads: everything runs in the loop's thread. Construct, call start(),
// send(), close(), held() and destroy it there (post with
// EventLoop::runInLoop from others); callbacks run there too and may call
// send() and close(), but must not destroy the client. counters() may be
// read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "muon/net/Callbacks.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TimerId.h"
#include "muon/net/relp/OutageReport.h"
#include "muon/net/relp/RelpParser.h"

namespace muon {
namespace net {

class EventLoop;
class TcpClient;
class TransportLayer;

namespace relp {

struct RelpClientOptions {
  // Frames sent and not yet acknowledged, at most (rsyslog's omrelp uses
  // 128 by default). Also the most duplicates one broken session can cause.
  size_t window = 128;
  // Frames held at most, sent or waiting for the window; >= window.
  size_t queueLimit = 1024;
  // The largest message send() takes (DATALEN). The server truncates or
  // refuses what is above its own limit (rsyslog: maxMessageSize, 8 KiB by
  // default), so keep both in step.
  size_t maxMessageBytes = 128 * 1024;
  // Back-off between attempts to reach the server: the first delay, doubled
  // after each failure up to the cap. After a broken session it starts
  // again from the first delay once the server has acknowledged a message;
  // refused connection attempts are retried by TcpClient's connector with
  // the same first delay and cap. With the cap at 250 ms a server back after
  // any outage is reached within about 250 ms of its return.
  int reconnectInitialMs = 50;
  int reconnectMaxMs = 250;
  // How long one connection attempt may wait for the server's answer.
  int connectTimeoutMs = 10 * 1000;
  // While the server stays away, the report (see setReportCallback) says
  // so at most this often: the first failure at once, then one line per
  // interval with the count and the time down, then one when it is back.
  // A 16 s outage thus costs three lines, not one per attempt.
  int reportIntervalMs = 10 * 1000;
  // A session in which something (open or a frame) has been waiting this
  // long without any response is given up and opened again (the frames are
  // sent again). librelp waits 90 s by default; 0 waits for ever.
  int ackTimeoutMs = 90 * 1000;
  // close(): how long to wait for the held frames' and the close's answers.
  int closeTimeoutMs = 5 * 1000;
  // The relp_software offer: name[,version[,url]] (only the name is required).
  std::string software = "muon,0.1.0";
  // RELP over TLS (rsyslog's imrelp with tls="on"): a client TlsContext
  // (muon::tls, TlsContext::newClient); null: plain TCP. A handshake that
  // fails is reported as kTlsRefused with the reason, nothing is sent, and
  // the next attempt follows the back-off.
  std::shared_ptr<TransportLayer> transportLayer;
};

struct RelpClientCounters {
  uint64_t framesSent = 0;    // syslog frames written to a connection, resends included
  uint64_t framesAcked = 0;   // acknowledged with 200 (each message once)
  uint64_t framesResent = 0;  // frames sent again in a later session: possible duplicates
  uint64_t sessions = 0;      // sessions opened (open answered with 200)
  uint64_t reconnects = 0;    // times a session broke and the client set out to reconnect
  uint64_t errors = 0;        // events reported to the error callback
  uint64_t refused = 0;       // responses other than 200 (also in errors)
  uint64_t serverCloses = 0;  // serverclose hints received (also in errors)
};

class RelpClient {
 public:
  enum class SendResult {
    kQueued,    // held; sent now or when the window has room
    kFull,      // queueLimit frames are held: offer it again after the resume callback
    kTooLarge,  // above maxMessageBytes: never sent
    kClosed,    // close() was called or the client is not started
  };
  enum class Error {
    kConnectFailed,   // an attempt to connect failed (errno in the text)
    kConnectionLost,  // the connection went down without serverclose
    kServerClose,     // the server sent serverclose
    kBadFrame,        // the server's bytes are not RELP frames
    kProtocol,        // a frame RELP does not allow here (unknown txnr or command)
    kRefused,         // a response other than 200 to a message
    kOpenRefused,     // the open was refused or its offers lack relp_version / syslog
    kTimeout,         // no response within ackTimeoutMs
    kTlsRefused,      // the TLS handshake failed (the reason in the text)
  };
  using AckCallback = std::function<void(uint64_t tag)>;
  using ErrorCallback = std::function<void(Error error, const std::string& detail)>;
  using ResumeCallback = std::function<void()>;
  // A line for people about the server's availability (OutageReport.h).
  using ReportCallback = std::function<void(const std::string& line)>;
  // close() finished: true if every held frame and the close were
  // acknowledged, false if closeTimeoutMs ran out first.
  using ClosedCallback = std::function<void(bool clean)>;

  RelpClient(EventLoop* loop, const InetAddress& server, RelpClientOptions options = {});
  ~RelpClient();
  RelpClient(const RelpClient&) = delete;
  RelpClient& operator=(const RelpClient&) = delete;

  // Set before start().
  void setAckCallback(AckCallback cb) { ackCallback_ = std::move(cb); }
  // Every event, as it happens (also each failed attempt while the server
  // is away: four a second): for programs that count or react.
  void setErrorCallback(ErrorCallback cb) { errorCallback_ = std::move(cb); }
  // The same events as lines for people, at most one per
  // options.reportIntervalMs while the server stays away, and one when a
  // session opens after failures ("session open again after 16.1 s down,
  // 64 failures"). Without one set, these lines go to the log (WARN, and
  // INFO for the return); every event is logged at DEBUG.
  void setReportCallback(ReportCallback cb) { reportCallback_ = std::move(cb); }
  // Called once after send() returned kFull, when a frame may be offered again.
  void setResumeCallback(ResumeCallback cb) { resumeCallback_ = std::move(cb); }
  void setClosedCallback(ClosedCallback cb) { closedCallback_ = std::move(cb); }

  // Starts connecting. Messages may be sent before the session is open.
  void start();
  // Takes one message (the syslog frame's data: an RFC 5424 or RFC 3164
  // line without its newline) and the caller's tag for it, reported back
  // through the ack callback.
  SendResult send(std::string message, uint64_t tag);
  // Takes no more messages, waits (bounded by closeTimeoutMs) for the held
  // frames' answers, sends `close`, waits for its answer, drops the
  // connection and calls the closed callback.
  void close();

  size_t held() const { return queue_.size(); }
  bool open() const { return state_ == State::kReady; }
  RelpClientCounters counters() const;
  const RelpClientOptions& options() const { return options_; }

  static const char* errorName(Error e);

 private:
  enum class State { kIdle, kConnecting, kOpening, kReady, kCloseSent, kClosed };
  struct Entry {
    std::string message;
    uint64_t tag = 0;
    uint32_t txnr = 0;  // in the current session, 0 if not sent in it
    bool everSent = false;
    bool acked = false;  // answered out of order; popped when it reaches the front
  };

  void onConnection(const TcpConnectionPtr& conn);
  void onMessage(const TcpConnectionPtr& conn, Buffer* buf);
  void handleFrame(RelpFrameData& frame);
  void handleOpenResponse(const RelpFrameData& frame);
  void handleAck(const RelpFrameData& frame);
  void fillWindow();
  // Writes output_ to conn_ now (what a broken session had is dropped).
  void flushOutput();
  // Writes output_ at the end of onMessage, or once this loop iteration ends.
  void scheduleFlush();
  void breakSession(Error error, const std::string& detail);
  void scheduleReconnect();
  void report(Error error, const std::string& detail);
  // A line of the report (none if empty): to the report callback or the log.
  void tell(const std::string& line, bool problem);
  void checkTimeouts();
  void finishClose(bool clean);
  void sendClose();
  void bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  EventLoop* const loop_;
  const RelpClientOptions options_;
  std::unique_ptr<TcpClient> client_;
  TcpConnectionPtr conn_;  // the connection of the current session
  RelpParser parser_;
  std::string output_;          // frames for conn_'s session, not yet written
  bool handlingInput_ = false;  // in onMessage: it flushes output_ when done
  bool flushQueued_ = false;    // a flushOutput() is queued on the loop
  // Expires with the client: a queued flush finds it gone and does nothing.
  std::shared_ptr<char> alive_ = std::make_shared<char>();
  State state_ = State::kIdle;
  std::deque<Entry> queue_;  // held frames, oldest first
  size_t sentInSession_ = 0;  // queue_'s first entries sent in this session
  uint32_t nextTxnr_ = 1;
  uint32_t closeTxnr_ = 0;
  int reconnectDelayMs_;
  OutageReport outage_;  // the failures since the last open session
  bool wantResume_ = false;  // send() said kFull: call the resume callback
  bool closing_ = false;     // close() was called: nothing more is taken
  bool broken_ = false;      // conn_'s session is given up; its down callback is awaited
  int64_t progressMs_ = 0;   // steady clock of the last response, or of the first request after none
  TimerId reconnectTimer_;
  TimerId checkTimer_;
  TimerId closeTimer_;
  AckCallback ackCallback_;
  ErrorCallback errorCallback_;
  ReportCallback reportCallback_;
  ResumeCallback resumeCallback_;
  ClosedCallback closedCallback_;

  std::atomic<uint64_t> framesSent_{0};
  std::atomic<uint64_t> framesAcked_{0};
  std::atomic<uint64_t> framesResent_{0};
  std::atomic<uint64_t> sessions_{0};
  std::atomic<uint64_t> reconnects_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> serverCloses_{0};
};

}  // namespace relp
}  // namespace net
}  // namespace muon
