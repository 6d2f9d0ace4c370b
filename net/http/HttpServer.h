// HttpServer: an HTTP/1.x server on a TcpServer, with muduo's interface:
// construct, setHttpCallback, setThreadNum, start, in the base loop's thread.
// The callback runs in each connection's I/O loop thread, so with
// setThreadNum(n > 0) it runs in n threads at once and must be thread-safe.
// The default callback answers 404 and closes, as muduo's.
//
// Per connection it parses requests with an HttpContext (pipelined requests
// are answered in order; answers to one batch of input go out in one send),
// keeps the connection alive as the request asks, sends "100 Continue" when a
// client waits for it, answers a bad request with HttpContext::error() and
// closes, and answers HEAD without the body. When a client's answers pile
// up unread past maxPendingOutputBytes, it stops reading the connection and
// resumes once they are written. Limits and timeouts: HttpServer::Options
// (HttpOptions.h).
//
// Trace context: a request with a valid W3C `traceparent` field has its
// callback run inside a TraceScope (muon/base/TraceContext.h) of a new span
// of that trace, so every line the handler logs on that thread carries
// `trace.id` (the request's trace) and `span.id` (the server's span); with
// Options::traceResponse the answer names that span in `traceresponse`. An
// invalid traceparent is ignored, as the specification says.
//
// Timeouts: one timer per connection, armed for its deadline (the request's
// first byte + requestTimeoutSeconds while a request is incomplete, the last
// answer + idleTimeoutSeconds while idle). A request does not touch the timer:
// it moves the deadline, a number; the timer, when it fires early, arms itself
// again for the deadline then. So keep-alive traffic costs no timer work, and
// an idle connection one timer event per idleTimeoutSeconds. At the
// deadline: 408 and close for an incomplete request, a quiet close for an idle
// connection; a connection that was answered and told to close but stays open
// is forced closed requestTimeoutSeconds later.
#pragma once

#include <functional>
#include <string>

#include "muon/net/TcpServer.h"
#include "muon/net/http/HttpOptions.h"

namespace muon {
namespace net {

class Buffer;
class HttpRequest;
class HttpResponse;

class HttpServer {
 public:
  using HttpCallback = std::function<void(const HttpRequest&, HttpResponse*)>;
  using Options = HttpOptions;

  HttpServer(EventLoop* loop, const InetAddress& listenAddr, const std::string& name,
             TcpServer::Option option = TcpServer::kNoReusePort);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  EventLoop* getLoop() const { return server_.getLoop(); }
  const std::string& name() const { return server_.name(); }
  // The bound address: the real port also when constructed with port 0.
  const InetAddress& listenAddress() const { return server_.listenAddress(); }

  // Set these before start().
  void setHttpCallback(HttpCallback cb) { httpCallback_ = std::move(cb); }
  void setThreadNum(int numThreads) { server_.setThreadNum(numThreads); }
  void setOptions(const Options& options) { options_ = options; }
  const Options& options() const { return options_; }

  void start();

 private:
  void onConnection(const TcpConnectionPtr& conn);
  void onMessage(const TcpConnectionPtr& conn, Buffer* buf, Timestamp receiveTime);
  // Runs the callback for one request, inside its trace's TraceScope when
  // it carries a valid traceparent (TraceContext.h).
  void answer(const HttpRequest& request, HttpResponse* response) const;
  // Set as the write-complete callback of a connection paused because its
  // answers piled up; resumes it. Static: it may run after the server is
  // gone, and then finds the connection closed before it touches `server`.
  static void resumeWhenWritten(HttpServer* server, const TcpConnectionPtr& conn);

  HttpCallback httpCallback_;
  Options options_;
  // Last, so destroyed first: its connections' disconnect callbacks, which
  // run as it is destroyed, find the members above still whole.
  TcpServer server_;
};

}  // namespace net
}  // namespace muon
