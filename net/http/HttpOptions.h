// HttpOptions: the limits and timeouts of an HttpServer (HttpServer::Options)
// and of the HttpContext that parses each connection's requests. A plain
// value: set it before HttpServer::start(); it is read, never written, by the
// I/O threads afterwards.
//
// Each limit has its answer, sent with "Connection: close", after which the
// connection is closed (docs/net.md, "HTTP"):
//   request line + header fields > maxHeaderBytes   431
//   more than maxHeaders header fields              431
//   Content-Length > maxBodyBytes                   413 (before the body is read)
//   a request not complete requestTimeoutSeconds
//     after its first byte arrived                  408
// and a keep-alive connection that starts no request for idleTimeoutSeconds
// is closed without an answer (there is no request to answer). A client that
// does not read its answers is not answered further past
// maxPendingOutputBytes of them (nor read from) until it does.
#pragma once

#include <cstddef>

namespace muon {
namespace net {

struct HttpOptions {
  // Request line and header fields together, line ends included. nginx's
  // and Node's defaults are 8 and 16 KiB; browsers' largest cookies fit.
  size_t maxHeaderBytes = 16 * 1024;
  // Header fields in one request (a repeated field counts each time).
  size_t maxHeaders = 100;
  // A request body (Content-Length); the body is held in memory.
  size_t maxBodyBytes = 1024 * 1024;
  // From the first byte of a request to its last; also bounds how long a
  // connection lingers after an error answer before it is closed.
  double requestTimeoutSeconds = 10.0;
  // A keep-alive connection between requests; 0 means never closed for that.
  double idleTimeoutSeconds = 60.0;
  // Answers queued for a client that does not read them (it pipelines
  // requests and reads nothing back): past this many bytes the server stops
  // reading that connection and answering its requests until they are
  // written out, so memory stays bounded. While it waits, the client has
  // idleTimeoutSeconds to start reading before the connection is closed.
  size_t maxPendingOutputBytes = 1024 * 1024;
  // Answer a request that carried a valid W3C traceparent with a
  // `traceresponse` field naming the span the server handled it in (W3C
  // Trace Context Level 2). Off by default: it tells the client the trace
  // ids, which a public server may not want to.
  bool traceResponse = false;
};

}  // namespace net
}  // namespace muon
