#include "muon/net/relp/RelpClient.h"

#include <algorithm>
#include <cassert>
#include <chrono>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/TcpClient.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/relp/RelpFrame.h"
#include "muon/net/relp/RelpResponse.h"

namespace muon {
namespace net {
namespace relp {

namespace {

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

RelpClient::RelpClient(EventLoop* loop, const InetAddress& server, RelpClientOptions options)
    : loop_(loop),
      options_(std::move(options)),
      client_(std::make_unique<TcpClient>(loop, server, "RelpClient")),
      reconnectDelayMs_(options_.reconnectInitialMs),
      outage_(options_.reportIntervalMs) {
  assert(options_.window > 0 && options_.queueLimit >= options_.window);
  assert(options_.reconnectInitialMs > 0 && options_.reconnectMaxMs >= options_.reconnectInitialMs);
  assert(options_.maxMessageBytes <= kMaxDataLength);
  client_->setRetryDelayMs(options_.reconnectInitialMs, options_.reconnectMaxMs);
  client_->setConnectTimeoutMs(options_.connectTimeoutMs);
  client_->setConnectionCallback([this](const TcpConnectionPtr& conn) { onConnection(conn); });
  client_->setMessageCallback(
      [this](const TcpConnectionPtr& conn, Buffer* buf, Timestamp) { onMessage(conn, buf); });
  client_->setConnectFailureCallback([this](int err) {
    report(Error::kConnectFailed, std::string("connect: ") + strerror_tl(err));
  });
  if (options_.transportLayer) {
    client_->setTransportLayer(options_.transportLayer);
    client_->setHandshakeFailureCallback([this](const TcpConnectionPtr& conn, const std::string& why) {
      if (conn == conn_) {
        // TLS 1.3: the server refused our certificate (or its absence)
        // after our side of the handshake was done and the connection up.
        // Its down callback follows and reconnects; this is why it went.
        if (broken_) return;
        broken_ = true;
        output_.clear();
        report(Error::kTlsRefused, why);
        return;
      }
      // The connection never came up: no down callback follows, so the
      // next attempt is scheduled here.
      report(Error::kTlsRefused, why);
      if (state_ != State::kClosed) scheduleReconnect();
    });
  }
}

RelpClient::~RelpClient() {
  loop_->assertInLoopThread();
  loop_->cancel(reconnectTimer_);
  loop_->cancel(checkTimer_);
  loop_->cancel(closeTimer_);
  // The connection may outlive this object by a few loop iterations (it is
  // closed through queued calls): it must not call back into it.
  if (TcpConnectionPtr conn = client_->connection()) {
    conn->setConnectionCallback(defaultConnectionCallback);
    conn->setMessageCallback(defaultMessageCallback);
  }
  // TcpClient closes the connection only if it holds the last reference.
  conn_.reset();
  client_->stop();
  client_.reset();
}

const char* RelpClient::errorName(Error e) {
  switch (e) {
    case Error::kConnectFailed: return "connect failed";
    case Error::kConnectionLost: return "connection lost";
    case Error::kServerClose: return "serverclose";
    case Error::kBadFrame: return "bad frame";
    case Error::kProtocol: return "protocol error";
    case Error::kRefused: return "refused";
    case Error::kOpenRefused: return "open refused";
    case Error::kTimeout: return "timeout";
    case Error::kTlsRefused: return "TLS refused";
  }
  return "unknown";
}

RelpClientCounters RelpClient::counters() const {
  RelpClientCounters c;
  c.framesSent = framesSent_.load(std::memory_order_relaxed);
  c.framesAcked = framesAcked_.load(std::memory_order_relaxed);
  c.framesResent = framesResent_.load(std::memory_order_relaxed);
  c.sessions = sessions_.load(std::memory_order_relaxed);
  c.reconnects = reconnects_.load(std::memory_order_relaxed);
  c.errors = errors_.load(std::memory_order_relaxed);
  c.refused = refused_.load(std::memory_order_relaxed);
  c.serverCloses = serverCloses_.load(std::memory_order_relaxed);
  return c;
}

void RelpClient::start() {
  loop_->assertInLoopThread();
  if (state_ != State::kIdle) return;
  state_ = State::kConnecting;
  if (options_.ackTimeoutMs > 0) {
    // Checked at a quarter of the limit: a stall is noticed within 1.25
    // times ackTimeoutMs, without a timer per frame.
    const double interval = std::max(options_.ackTimeoutMs / 4, 1) / 1000.0;
    checkTimer_ = loop_->runEvery(interval, [this] { checkTimeouts(); });
  }
  client_->connect();
}

RelpClient::SendResult RelpClient::send(std::string message, uint64_t tag) {
  loop_->assertInLoopThread();
  if (state_ == State::kIdle || state_ == State::kClosed || closing_) return SendResult::kClosed;
  if (message.size() > options_.maxMessageBytes) return SendResult::kTooLarge;
  if (queue_.size() >= options_.queueLimit) {
    wantResume_ = true;
    return SendResult::kFull;
  }
  Entry entry;
  entry.message = std::move(message);
  entry.tag = tag;
  queue_.push_back(std::move(entry));
  fillWindow();
  return SendResult::kQueued;
}

void RelpClient::close() {
  loop_->assertInLoopThread();
  if (closing_ || state_ == State::kClosed) return;
  closing_ = true;
  if (state_ == State::kIdle) {
    finishClose(queue_.empty());
    return;
  }
  closeTimer_ = loop_->runAfter(options_.closeTimeoutMs / 1000.0, [this] {
    closeTimer_ = TimerId();
    finishClose(false);
  });
  if (state_ == State::kReady && queue_.empty()) sendClose();
}

void RelpClient::sendClose() {
  assert(state_ == State::kReady && queue_.empty() && conn_);
  closeTxnr_ = nextTxnr_;
  nextTxnr_ = nextTxnr(nextTxnr_);
  state_ = State::kCloseSent;
  progressMs_ = nowMs();
  appendFrame(&output_, closeTxnr_, "close", {});
  scheduleFlush();
}

void RelpClient::finishClose(bool clean) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  loop_->cancel(reconnectTimer_);
  loop_->cancel(checkTimer_);
  loop_->cancel(closeTimer_);
  client_->stop();
  if (conn_) {
    // RELP: once the close is answered the client drops the connection.
    conn_->forceClose();
    broken_ = true;
  }
  if (closedCallback_) closedCallback_(clean);
}

void RelpClient::onConnection(const TcpConnectionPtr& conn) {
  if (conn->connected()) {
    if (state_ == State::kClosed) {
      conn->forceClose();
      return;
    }
    conn_ = conn;
    output_.clear();
    // Frames go out as they are offered, one acknowledgement at a time
    // refilling the window: with Nagle's algorithm each small write would
    // wait for the server's delayed ACK (up to 200 ms on Linux).
    conn->setTcpNoDelay(true);
    broken_ = false;
    parser_.reset();
    sentInSession_ = 0;
    // Everything held is sent again, also a frame answered out of order
    // whose predecessor was not answered: the acknowledgements are reported
    // in order, and the new session's numbering has no gaps.
    for (Entry& e : queue_) {
      e.txnr = 0;
      e.acked = false;
    }
    std::string offers = "relp_version=0\nrelp_software=" + options_.software + "\ncommands=syslog";
    conn->send(encodeFrame(1, "open", offers));
    nextTxnr_ = 2;
    state_ = State::kOpening;
    progressMs_ = nowMs();
    return;
  }
  if (conn != conn_) return;
  if (!broken_ && state_ != State::kClosed) {
    report(Error::kConnectionLost, "the connection went down");
  }
  conn_.reset();
  output_.clear();
  broken_ = false;
  sentInSession_ = 0;
  if (state_ == State::kClosed) return;
  state_ = State::kConnecting;
  bump(reconnects_);
  scheduleReconnect();
}

void RelpClient::scheduleReconnect() {
  const int delayMs = reconnectDelayMs_;
  reconnectDelayMs_ = std::min(reconnectDelayMs_ * 2, options_.reconnectMaxMs);
  loop_->cancel(reconnectTimer_);
  reconnectTimer_ = loop_->runAfter(delayMs / 1000.0, [this] {
    reconnectTimer_ = TimerId();
    if (state_ != State::kClosed) client_->connect();
  });
}

void RelpClient::report(Error error, const std::string& detail) {
  bump(errors_);
  // While the server stays away the back-off tries four times a second:
  // people hear of the first failure, then of the count once an interval.
  const std::string line = outage_.failed(nowMs(), std::string(errorName(error)) + ": " + detail);
  if (line.empty()) {
    LOG_DEBUG << "RelpClient " << client_->serverAddress().toIpPort() << ": " << errorName(error)
              << ": " << detail;
  }
  tell(line, true);
  if (errorCallback_) errorCallback_(error, detail);
}

void RelpClient::tell(const std::string& line, bool problem) {
  if (line.empty()) return;
  if (reportCallback_) {
    reportCallback_(line);
  } else if (problem) {
    LOG_WARN << "RelpClient " << client_->serverAddress().toIpPort() << ": " << line;
  } else {
    LOG_INFO << "RelpClient " << client_->serverAddress().toIpPort() << ": " << line;
  }
}

void RelpClient::breakSession(Error error, const std::string& detail) {
  if (broken_) return;
  broken_ = true;
  output_.clear();
  report(error, detail);
  // The connection's down callback (onConnection) schedules the reconnect,
  // once TcpClient has let go of this connection.
  if (conn_) conn_->forceClose();
}

void RelpClient::onMessage(const TcpConnectionPtr& conn, Buffer* buf) {
  if (conn != conn_ || broken_ || state_ == State::kClosed) {
    buf->retrieveAll();
    return;
  }
  // The frames made ready from here on (refills, the ack callback's sends,
  // close) are written together once everything read is handled.
  handlingInput_ = true;
  while (buf->readableBytes() > 0 && !broken_ && conn_ == conn) {
    size_t consumed = 0;
    RelpParser::Status status = parser_.parse(buf->peek(), buf->readableBytes(), &consumed);
    buf->retrieve(consumed);
    if (status == RelpParser::Status::kError) {
      breakSession(Error::kBadFrame, std::string(RelpParser::errorName(parser_.error())) +
                                         " at byte " + std::to_string(parser_.offset()));
    } else if (status == RelpParser::Status::kFrame) {
      handleFrame(parser_.frame());
    }
  }
  if (conn_ != conn || broken_) buf->retrieveAll();
  if (wantResume_ && queue_.size() < options_.queueLimit && state_ != State::kClosed && !closing_) {
    wantResume_ = false;
    if (resumeCallback_) resumeCallback_();
  }
  handlingInput_ = false;
  if (output_.empty() && conn_ == conn && !broken_ && sentInSession_ > 0) {
    // Nothing goes back to carry the ACK of these responses (the window has
    // no room for what waits, or nothing waits), while rsyslog's imrelp
    // writes each response on its own with Nagle's algorithm: it holds the
    // rest of a window's responses until that ACK, which the kernel would
    // delay by up to 40 ms. One window per 40 ms is what batching the
    // frames first brought (2,900 lines/s at window 128).
    conn->setTcpQuickAck();
  }
  flushOutput();
}

void RelpClient::handleFrame(RelpFrameData& frame) {
  if (frame.txnr == 0) {
    // A hint: the server's only one is serverclose; others are ignored, as
    // hints may be.
    if (frame.command == "serverclose") {
      bump(serverCloses_);
      breakSession(Error::kServerClose, "the server is closing the session");
    }
    return;
  }
  if (frame.command != "rsp") {
    breakSession(Error::kProtocol, "command '" + frame.command + "' from the server");
    return;
  }
  progressMs_ = nowMs();
  switch (state_) {
    case State::kOpening:
      if (frame.txnr != 1) {
        breakSession(Error::kProtocol, "response " + std::to_string(frame.txnr) + " before open's");
      } else {
        handleOpenResponse(frame);
      }
      break;
    case State::kCloseSent:
      if (frame.txnr == closeTxnr_) {
        finishClose(true);
      } else {
        handleAck(frame);
      }
      break;
    case State::kReady:
      handleAck(frame);
      break;
    default:
      breakSession(Error::kProtocol, "response in state " + std::to_string(static_cast<int>(state_)));
      break;
  }
}

void RelpClient::handleOpenResponse(const RelpFrameData& frame) {
  RelpResponse rsp;
  if (!parseResponse(frame.data, &rsp)) {
    breakSession(Error::kOpenRefused, "malformed answer to open");
    return;
  }
  if (rsp.code != 200) {
    breakSession(Error::kOpenRefused,
                 "open answered " + std::to_string(rsp.code) + " " + std::string(rsp.text));
    return;
  }
  if (!hasOffer(rsp.commandData, "relp_version") || !hasOffer(rsp.commandData, "commands", "syslog")) {
    breakSession(Error::kOpenRefused, "the server does not offer relp_version and commands=syslog");
    return;
  }
  state_ = State::kReady;
  bump(sessions_);
  tell(outage_.recovered(nowMs(), "session open again"), false);
  if (closing_ && queue_.empty()) {
    sendClose();
  } else {
    fillWindow();
  }
}

void RelpClient::handleAck(const RelpFrameData& frame) {
  // Responses come in the order of the commands; one out of order is
  // accepted, but the acknowledgements are still reported in order.
  size_t index = sentInSession_;
  if (sentInSession_ > 0 && frame.txnr <= kMaxTxnr) {
    index = txnrDistance(queue_.front().txnr, frame.txnr);
  }
  if (index >= sentInSession_ || queue_[index].acked) {
    breakSession(Error::kProtocol, "response to unknown transaction " + std::to_string(frame.txnr));
    return;
  }
  RelpResponse rsp;
  if (!parseResponse(frame.data, &rsp)) {
    breakSession(Error::kProtocol, "malformed response to transaction " + std::to_string(frame.txnr));
    return;
  }
  if (rsp.code != 200) {
    bump(refused_);
    breakSession(Error::kRefused, "transaction " + std::to_string(frame.txnr) + " answered " +
                                      std::to_string(rsp.code) + " " + std::string(rsp.text));
    return;
  }
  queue_[index].acked = true;
  reconnectDelayMs_ = options_.reconnectInitialMs;
  while (!queue_.empty() && queue_.front().acked) {
    const uint64_t tag = queue_.front().tag;
    queue_.pop_front();
    --sentInSession_;
    bump(framesAcked_);
    if (ackCallback_) ackCallback_(tag);
    if (state_ == State::kClosed || broken_) return;
  }
  if (closing_ && queue_.empty() && state_ == State::kReady) {
    sendClose();
  } else {
    fillWindow();
  }
}

void RelpClient::fillWindow() {
  if (state_ != State::kReady || !conn_ || broken_) return;
  const size_t end = std::min(queue_.size(), options_.window);
  if (sentInSession_ >= end) return;
  if (sentInSession_ == 0) progressMs_ = nowMs();
  uint64_t resent = 0;
  for (size_t i = sentInSession_; i < end; ++i) {
    Entry& e = queue_[i];
    e.txnr = nextTxnr_;
    nextTxnr_ = nextTxnr(nextTxnr_);
    if (e.everSent) ++resent;
    e.everSent = true;
    appendFrame(&output_, e.txnr, "syslog", e.message);
  }
  bump(framesSent_, end - sentInSession_);
  if (resent > 0) bump(framesResent_, resent);
  sentInSession_ = end;
  scheduleFlush();
}

void RelpClient::scheduleFlush() {
  if (handlingInput_ || flushQueued_) return;
  flushQueued_ = true;
  std::weak_ptr<char> alive = alive_;
  loop_->queueInLoop([this, alive] {
    // The client is destroyed only in this thread: alive now, alive for the call.
    if (alive.expired()) return;
    flushQueued_ = false;
    flushOutput();
  });
}

void RelpClient::flushOutput() {
  if (output_.empty()) return;
  // Written at once when nothing is queued on the connection; output_ keeps
  // its capacity for the next batch.
  if (conn_ && !broken_) conn_->send(std::string_view(output_));
  output_.clear();
}

void RelpClient::checkTimeouts() {
  const bool waiting = state_ == State::kOpening || state_ == State::kCloseSent ||
                       (state_ == State::kReady && sentInSession_ > 0);
  if (!waiting || broken_ || !conn_) return;
  const int64_t waitedMs = nowMs() - progressMs_;
  if (waitedMs >= options_.ackTimeoutMs) {
    breakSession(Error::kTimeout, "no response for " + std::to_string(waitedMs) + " ms");
  }
}

}  // namespace relp
}  // namespace net
}  // namespace muon
