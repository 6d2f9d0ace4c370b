#include "muon/net/http/HttpServer.h"

#include <any>
#include <chrono>
#include <cstdint>
#include <limits>

#include "muon/base/Logging.h"
#include "muon/base/TraceContext.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/http/HttpContext.h"
#include "muon/net/http/HttpRequest.h"
#include "muon/net/http/HttpResponse.h"

namespace muon {
namespace net {

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// Deadlines are on the monotonic clock, in microseconds: a wall-clock step
// neither expires nor prolongs a request.
int64_t nowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t after(int64_t now, double seconds) { return now + static_cast<int64_t>(seconds * 1e6); }

// A connection's state, kept in its context (TcpConnection::setContext).
struct Session {
  enum Phase {
    kIdle,     // between requests: at the deadline, closed quietly
    kRequest,  // a request has begun: at the deadline, 408
    kClosing,  // answered and shut down: at the deadline, forced closed
  };

  explicit Session(const HttpOptions& options) : context(options) {}

  HttpContext context;
  Buffer output;  // the answers to one batch of input, sent together
  Phase phase = kIdle;
  int64_t deadline = kNever;
  TimerId timer;  // pending, or none
  int64_t timerAt = 0;
  bool paused = false;  // not reading: answers wait to be written out
};

Session* sessionOf(const TcpConnectionPtr& conn) {
  return std::any_cast<Session>(conn->getMutableContext());
}

void onTimer(const std::weak_ptr<TcpConnection>& weakConn);

void arm(const TcpConnectionPtr& conn, Session* session, int64_t deadline, int64_t now) {
  double delay = deadline > now ? static_cast<double>(deadline - now) / 1e6 : 0.0;
  std::weak_ptr<TcpConnection> weakConn(conn);
  session->timer = conn->getLoop()->runAfter(delay, [weakConn] { onTimer(weakConn); });
  session->timerAt = deadline;
}

// Moves the deadline; touches the timer only when the pending one would
// fire too late (or there is none).
void setDeadline(const TcpConnectionPtr& conn, Session* session, int64_t deadline, int64_t now) {
  session->deadline = deadline;
  if (deadline == kNever) return;  // a pending timer fires and finds nothing due
  if (session->timer.valid()) {
    if (session->timerAt <= deadline) return;
    conn->getLoop()->cancel(session->timer);
  }
  arm(conn, session, deadline, now);
}

// Answers with `code` and "Connection: close".
void appendError(Buffer* output, HttpResponse::HttpStatusCode code) {
  HttpResponse response(true);
  response.setStatusCode(code);
  response.setContentType("text/plain");
  response.setBody(std::string(HttpResponse::reasonPhrase(code)) + "\n");
  response.appendToBuffer(output);
}

// After an answer that closes: half-close once it is written, ignore further
// input, and force the close if the peer keeps the connection open.
void closeAfterAnswer(const TcpConnectionPtr& conn, Session* session, int64_t now) {
  conn->shutdown();
  session->phase = Session::kClosing;
  setDeadline(conn, session, after(now, session->context.options().requestTimeoutSeconds), now);
}

void onTimer(const std::weak_ptr<TcpConnection>& weakConn) {
  TcpConnectionPtr conn = weakConn.lock();
  if (!conn || conn->disconnected()) return;
  Session* session = sessionOf(conn);
  if (session == nullptr) return;
  session->timer = TimerId();
  if (session->deadline == kNever) return;
  int64_t now = nowMicros();
  if (session->deadline > now) {  // moved on since the timer was armed
    arm(conn, session, session->deadline, now);
    return;
  }
  switch (session->phase) {
    case Session::kIdle:
      LOG_DEBUG << "HttpServer: " << conn->name() << " idle, closing";
      closeAfterAnswer(conn, session, now);
      break;
    case Session::kRequest:
      LOG_DEBUG << "HttpServer: " << conn->name() << " request timed out";
      appendError(&session->output, HttpResponse::k408RequestTimeout);
      conn->send(&session->output);
      closeAfterAnswer(conn, session, now);
      break;
    case Session::kClosing: conn->forceClose(); break;
  }
}

void defaultHttpCallback(const HttpRequest&, HttpResponse* resp) {
  resp->setStatusCode(HttpResponse::k404NotFound);
  resp->setStatusMessage("Not Found");
  resp->setCloseConnection(true);
}

}  // namespace

HttpServer::HttpServer(EventLoop* loop, const InetAddress& listenAddr, const std::string& name,
                       TcpServer::Option option)
    : httpCallback_(defaultHttpCallback), server_(loop, listenAddr, name, option) {
  server_.setConnectionCallback([this](const TcpConnectionPtr& conn) { onConnection(conn); });
  server_.setMessageCallback(
      [this](const TcpConnectionPtr& conn, Buffer* buf, Timestamp t) { onMessage(conn, buf, t); });
}

HttpServer::~HttpServer() = default;

void HttpServer::start() {
  LOG_INFO << "HttpServer[" << server_.name() << "] starts listening on " << server_.ipPort();
  server_.start();
}

void HttpServer::onConnection(const TcpConnectionPtr& conn) {
  if (conn->connected()) {
    conn->setTcpNoDelay(true);  // an answer is one write; 100 Continue and 408 are not held back
    conn->setContext(Session(options_));
    Session* session = sessionOf(conn);
    int64_t now = nowMicros();
    setDeadline(conn, session,
                options_.idleTimeoutSeconds > 0 ? after(now, options_.idleTimeoutSeconds) : kNever,
                now);
  } else if (Session* session = sessionOf(conn)) {
    if (session->timer.valid()) conn->getLoop()->cancel(session->timer);
    session->timer = TimerId();
  }
}

void HttpServer::onMessage(const TcpConnectionPtr& conn, Buffer* buf, Timestamp receiveTime) {
  Session* session = sessionOf(conn);
  if (session->phase == Session::kClosing) {  // answered for the last time
    buf->retrieveAll();
    return;
  }
  HttpContext& context = session->context;
  bool close = false;
  bool answered = false;
  bool pause = false;
  while (true) {
    const size_t pending = session->output.readableBytes() + conn->outputBuffer()->readableBytes();
    if (pending > 0 && pending >= options_.maxPendingOutputBytes) {
      pause = true;  // the client is not reading its answers
      break;
    }
    if (!context.parseRequest(buf, receiveTime)) {
      appendError(&session->output, context.error());
      close = true;
      break;
    }
    if (!context.gotAll()) {
      if (context.takeContinue()) session->output.append("HTTP/1.1 100 Continue\r\n\r\n");
      break;
    }
    const HttpRequest& request = context.request();
    HttpResponse response(!context.keepAlive());
    answer(request, &response);
    if (request.method() == HttpRequest::kHead) {
      response.appendHeadToBuffer(&session->output);
    } else {
      response.appendToBuffer(&session->output);
    }
    answered = true;
    close = response.closeConnection();
    context.reset();
    if (close || buf->readableBytes() == 0) break;
  }
  if (pause) {
    // Read nothing more until the answers are out. The write-complete
    // callback resumes; it is set only meanwhile (a send pays for one when
    // set), and before the send below, which may complete at once.
    session->paused = true;
    conn->stopRead();
    conn->setWriteCompleteCallback(
        [this](const TcpConnectionPtr& c) { resumeWhenWritten(this, c); });
  }
  if (session->output.readableBytes() > 0) conn->send(&session->output);
  int64_t now = nowMicros();
  if (close) {
    buf->retrieveAll();
    closeAfterAnswer(conn, session, now);
  } else if (pause) {
    // The client has the idle time to start reading.
    session->phase = Session::kIdle;
    setDeadline(conn, session,
                options_.idleTimeoutSeconds > 0 ? after(now, options_.idleTimeoutSeconds) : kNever,
                now);
  } else if (context.inProgress() || buf->readableBytes() > 0) {
    // A request has begun: its time runs from its first byte, which came in
    // this batch unless the same request was already under way.
    if (session->phase != Session::kRequest || answered) {
      session->phase = Session::kRequest;
      setDeadline(conn, session, after(now, options_.requestTimeoutSeconds), now);
    }
  } else {
    session->phase = Session::kIdle;
    setDeadline(conn, session,
                options_.idleTimeoutSeconds > 0 ? after(now, options_.idleTimeoutSeconds) : kNever,
                now);
  }
}

void HttpServer::answer(const HttpRequest& request, HttpResponse* response) const {
  const auto& headers = request.headers();
  const auto traceparent = headers.find("traceparent");
  TraceContext incoming;
  if (traceparent == headers.end() || !TraceContext::parse(traceparent->second, &incoming)) {
    httpCallback_(request, response);
    return;
  }
  // The request's lines carry its trace and the span this server handles it in.
  const TraceContext span = incoming.child();
  {
    TraceScope scope(span);
    httpCallback_(request, response);
  }
  if (options_.traceResponse) response->addHeader("traceresponse", span.traceparent());
}

void HttpServer::resumeWhenWritten(HttpServer* server, const TcpConnectionPtr& conn) {
  if (!conn->connected()) return;
  Session* session = sessionOf(conn);
  if (session == nullptr || !session->paused) return;
  session->paused = false;
  conn->setWriteCompleteCallback(nullptr);
  conn->startRead();
  // The requests already read wait in the input buffer: answer them now.
  server->onMessage(conn, conn->inputBuffer(), Timestamp::now());
}

}  // namespace net
}  // namespace muon
