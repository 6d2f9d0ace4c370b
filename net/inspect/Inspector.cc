#include "muon/net/inspect/Inspector.h"

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/http/HttpResponse.h"
#include "muon/net/inspect/MetricsWriter.h"
#include "muon/net/inspect/NetMetrics.h"
#include "muon/net/inspect/ProcessInspector.h"
#include "muon/net/inspect/SystemInspector.h"

namespace muon {
namespace net {

namespace {

// "/a/b/c" -> {"a", "b", "c"}; empty segments dropped.
std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// Equal, in a time that depends on the lengths only, not on where the
// strings first differ: a token cannot be guessed byte by byte by timing.
bool equalInConstantTime(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  const size_t n = expected.size();
  for (size_t i = 0; i < given.size(); ++i) {
    const unsigned char e = n > 0 ? static_cast<unsigned char>(expected[i % n]) : 0;
    diff |= static_cast<unsigned char>(static_cast<unsigned char>(given[i]) ^ e);
  }
  // Touch every byte of `expected` as well when `given` is shorter.
  for (size_t i = given.size(); i < n; ++i) diff |= static_cast<unsigned char>(expected[i] ^ 0);
  return diff == 0 && n > 0;
}

void answer(HttpResponse* resp, HttpResponse::HttpStatusCode code, std::string body,
            const char* contentType = "text/plain; charset=utf-8") {
  resp->setStatusCode(code);
  resp->setContentType(contentType);
  resp->setBody(std::move(body));
}

}  // namespace

Inspector::Inspector(EventLoop* loop, const InetAddress& httpAddr, const std::string& name)
    : alive_(std::make_shared<bool>(true)), server_(loop, httpAddr, name) {
  server_.setHttpCallback([this](const HttpRequest& req, HttpResponse* resp) { onRequest(req, resp); });
  ProcessInspector::registerCommands(this);
  SystemInspector::registerCommands(this);
  // muduo's Inspector starts itself; so does this one, in the loop's next
  // iteration unless start() comes first.
  std::weak_ptr<bool> alive = alive_;
  loop->queueInLoop([this, alive] {
    if (alive.lock()) start();
  });
}

Inspector::~Inspector() { alive_.reset(); }

void Inspector::start() {
  server_.getLoop()->assertInLoopThread();
  if (started_) return;
  started_ = true;
  server_.start();
  LOG_INFO << "Inspector " << server_.name() << " listening on " << listenAddress().toIpPort();
}

void Inspector::add(const std::string& module, const std::string& command, Callback cb,
                    const std::string& help) {
  std::lock_guard<std::mutex> lock(mutex_);
  modules_[module][command] = Command{std::move(cb), help};
}

void Inspector::remove(const std::string& module, const std::string& command) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(module);
  if (it == modules_.end()) return;
  it->second.erase(command);
  if (it->second.empty()) modules_.erase(it);
}

void Inspector::addLogging(const AsyncLogging& log, const std::string& name) {
  logs_.addLogging(&log, name);
}

void Inspector::addSyslog(const SyslogSink& sink, const std::string& name) {
  logs_.addSyslog(&sink, name);
}

std::string Inspector::metrics() const {
  MetricsWriter out;
  logs_.writeMetrics(&out);
  writeNetMetrics(&out);
  return out.text();
}

std::string Inspector::index() const {
  std::string page =
      "/log/level    GET: the log levels; PUT: set them (MUON_LOG_LEVEL syntax in the body)\n"
      "/log/stats    the logging sinks' counters\n"
      "/metrics      Prometheus text exposition format 0.0.4\n";
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [module, commands] : modules_) {
    for (const auto& [command, c] : commands) {
      std::string path = "/" + module + "/" + command;
      path.resize(std::max(path.size() + 1, size_t{20}), ' ');
      page += path + c.help + "\n";
    }
  }
  return page;
}

bool Inspector::writeAllowed(const HttpRequest& req, HttpResponse* resp) const {
  if (!options_.allowWrite) {
    answer(resp, HttpResponse::k403Forbidden,
           "writes are off: start the inspector with Options::allowWrite "
           "(inspect_server: --allow-write)\n");
    return false;
  }
  if (!options_.token.empty()) {
    const std::string auth = req.getHeader("Authorization");
    const std::string scheme = "Bearer ";
    const bool bearer = auth.size() >= scheme.size() && auth.compare(0, scheme.size(), scheme) == 0;
    if (!bearer || !equalInConstantTime(auth.substr(scheme.size()), options_.token)) {
      answer(resp, HttpResponse::k401Unauthorized,
             bearer ? "the bearer token is wrong\n"
                    : "a bearer token is required (Authorization: Bearer TOKEN)\n");
      resp->addHeader("WWW-Authenticate", "Bearer");
      return false;
    }
  }
  return true;
}

void Inspector::logLevel(const HttpRequest& req, HttpResponse* resp) {
  if (req.method() == HttpRequest::kGet || req.method() == HttpRequest::kHead) {
    answer(resp, HttpResponse::k200Ok, LogInspector::levels());
  } else if (req.method() == HttpRequest::kPut) {
    if (!writeAllowed(req, resp)) return;
    std::string error;
    if (LogInspector::setLevels(req.body(), &error)) {
      std::string levels = LogInspector::levels();
      // The spec as parsed, on one line (never the request's own bytes).
      LOG_WARN << "Inspector: log levels set to " << levels.substr(0, levels.find('\n'));
      answer(resp, HttpResponse::k200Ok, std::move(levels));
    } else {
      answer(resp, HttpResponse::k400BadRequest, error + "\n");
    }
  } else {
    answer(resp, HttpResponse::k405MethodNotAllowed, "GET or PUT\n");
    resp->addHeader("Allow", "GET, HEAD, PUT");
  }
}

void Inspector::onRequest(const HttpRequest& req, HttpResponse* resp) {
  const std::string& path = req.path();
  if (path == "/log/level") {
    logLevel(req, resp);
    return;
  }
  const bool get = req.method() == HttpRequest::kGet || req.method() == HttpRequest::kHead;
  if (!get) {
    answer(resp, HttpResponse::k405MethodNotAllowed, "GET only\n");
    resp->addHeader("Allow", "GET, HEAD");
    return;
  }
  if (path == "/" || path.empty()) {
    answer(resp, HttpResponse::k200Ok, index());
  } else if (path == "/metrics") {
    answer(resp, HttpResponse::k200Ok, metrics(), MetricsWriter::kContentType);
  } else if (path == "/log/stats") {
    answer(resp, HttpResponse::k200Ok, logs_.stats());
  } else {
    std::vector<std::string> parts = splitPath(path);
    Callback cb;
    if (parts.size() >= 2) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto m = modules_.find(parts[0]);
      if (m != modules_.end()) {
        auto c = m->second.find(parts[1]);
        if (c != m->second.end()) cb = c->second.callback;
      }
    }
    if (!cb) {
      answer(resp, HttpResponse::k404NotFound, "no such page; GET / lists them\n");
      return;
    }
    ArgList args(parts.begin() + 2, parts.end());
    answer(resp, HttpResponse::k200Ok, cb(req.method(), args));
  }
}

}  // namespace net
}  // namespace muon
