// Inspector: an HTTP server inside a program that shows its state and lets
// an operator steer it, muduo's net/inspect with muon's own pages.
//
// muduo's interface: Inspector(loop, addr, name); add(module, command,
// callback, help) serves GET /module/command[/arg...] with the callback's
// text; remove(module, command). Built in: /proc/{overview,status,
// opened_files,threads}, /sys/{overview,loadavg,meminfo,stat}, and muon's
//   GET  /log/level    the Logger's levels (default and per module)
//   PUT  /log/level    new levels in MUON_LOG_LEVEL's syntax, in the body
//   GET  /log/stats    the counters of the registered sinks
//   GET  /metrics      Prometheus text exposition format 0.0.4
// and GET / lists the pages. docs/net.md, "The inspector", has every page
// and metric.
//
// Safe by default: give it a loopback address (Inspector::loopback(port));
// PUT /log/level is answered 403 unless Options::allowWrite, and 401 unless
// the request carries "Authorization: Bearer <token>" when Options::token
// is set (compared in constant time). No page reads a path from a request.
//
// Thread safety: construct, setOptions, start in the loop's thread; add,
// remove, addLogging, addSyslog from any thread. Requests are served in the
// loop's thread (the HttpServer has no threads of its own), so the pages
// run there: they are cheap, but a busy loop makes them wait, so programs
// usually give the inspector its own EventLoopThread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "muon/net/http/HttpRequest.h"
#include "muon/net/http/HttpServer.h"
#include "muon/net/inspect/LogInspector.h"

namespace muon {

class AsyncLogging;
class SyslogSink;
class JournaldSink;

namespace net {

class HttpResponse;

class Inspector {
 public:
  using ArgList = std::vector<std::string>;
  // Returns the page's text (served as text/plain).
  using Callback = std::function<std::string(HttpRequest::Method, const ArgList& args)>;

  struct Options {
    // Whether PUT /log/level is served at all (403 otherwise).
    bool allowWrite = false;
    // If not empty, PUT /log/level needs "Authorization: Bearer <token>" (401 otherwise).
    std::string token;
  };

  // 127.0.0.1:port (0: a free port, see listenAddress()).
  static InetAddress loopback(uint16_t port) { return InetAddress(port, true); }

  // Serves on httpAddr once started (see start()); `name` names the server.
  Inspector(EventLoop* loop, const InetAddress& httpAddr, const std::string& name);
  ~Inspector();
  Inspector(const Inspector&) = delete;
  Inspector& operator=(const Inspector&) = delete;

  void setOptions(const Options& options) { options_ = options; }

  // Listens. muduo's Inspector starts itself from its constructor (in the
  // loop's next iteration); this one does too, and start() does it now,
  // for a program that wants listenAddress() at once. Idempotent; loop thread.
  void start();
  // The bound address (the real port after start()).
  const InetAddress& listenAddress() const { return server_.listenAddress(); }

  void add(const std::string& module, const std::string& command, Callback cb,
           const std::string& help);
  void remove(const std::string& module, const std::string& command);

  // Registers a sink whose counters /log/stats and /metrics show, labelled
  // sink="name". It must outlive the Inspector or be removed first.
  void addLogging(const AsyncLogging& log, const std::string& name = "async");
  void addSyslog(const SyslogSink& sink, const std::string& name = "syslog");
  void addJournald(const JournaldSink& sink, const std::string& name = "journald") {
    logs_.addJournald(&sink, name);
  }
  void removeLogging(const AsyncLogging& log) { logs_.removeLogging(&log); }
  void removeSyslog(const SyslogSink& sink) { logs_.removeSyslog(&sink); }
  void removeJournald(const JournaldSink& sink) { logs_.removeJournald(&sink); }

  // The /metrics page (the logging and net families), for tests and for
  // programs that serve it elsewhere. Any thread.
  std::string metrics() const;

 private:
  void onRequest(const HttpRequest& req, HttpResponse* resp);
  void logLevel(const HttpRequest& req, HttpResponse* resp);
  // Whether a write may go ahead; if not, the answer is in resp.
  bool writeAllowed(const HttpRequest& req, HttpResponse* resp) const;
  std::string index() const;

  struct Command {
    Callback callback;
    std::string help;
  };
  Options options_;
  LogInspector logs_;
  mutable std::mutex mutex_;
  std::map<std::string, std::map<std::string, Command>> modules_;  // guarded by mutex_
  bool started_ = false;
  // Tells the start queued by the constructor whether this is still alive.
  std::shared_ptr<bool> alive_;
  HttpServer server_;
};

}  // namespace net
}  // namespace muon
