// W3C trace context through HttpServer (label trace): a request that curl
// sends with a valid traceparent has every line its handler logs carry
// trace.id and span.id, in a text file, a JSON file and the journal (a
// private journald, tests/support/Journald.h); an invalid one, or none,
// carries neither; traceresponse names the server's span when asked for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "HttpTestServer.h"
#include "Journald.h"
#include "TempDir.h"
#include "muon/base/JournaldSink.h"
#include "muon/base/Logging.h"
#include "muon/base/SyncLogging.h"
#include "muon/base/TraceContext.h"
#include "muon/net/http/HttpRequest.h"
#include "muon/net/http/HttpResponse.h"

namespace muon {
namespace net {
namespace test {
namespace {

constexpr const char* kTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kParentId = "00f067aa0ba902b7";

void loggingCallback(const HttpRequest& req, HttpResponse* resp) {
  LOG_INFO << "handling " << req.path();
  resp->setStatusCode(HttpResponse::k200Ok);
  resp->setBody("ok");
}

// The traceresponse curl got in its dumped head ("" if none).
std::string traceResponseIn(const std::string& head) {
  const std::string field = "traceresponse: ";
  const size_t at = head.find(field);
  if (at == std::string::npos) return "";
  return head.substr(at + field.size(), head.find('\r', at) - at - field.size());
}

// The line of `lines` that holds `text`; "" if none.
std::string lineWith(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return l;
  }
  return "";
}

TEST(HttpTrace, ARequestsTraceparentIsOnEveryLineItsHandlerLogs) {
  if (!haveCurl()) GTEST_SKIP() << "curl is not installed (./build.sh installs it)";
  muon::test::Journald journald;
  std::string why;
  const bool haveJournal = journald.start(&why);
  if (!haveJournal && muon::test::Journald::required() && !journald.namespaceRefused()) {
    FAIL() << "no private journald: " << why;
  }
  muon::test::TempDir textDir, jsonDir;
  SyncLogging text(textDir.file("text"), 1 << 30);
  SyncLogging::Options jsonOptions;
  jsonOptions.files.format = LineFormat::kJson;
  SyncLogging json(jsonDir.file("json"), 1 << 30, jsonOptions);
  JournaldOptions journalOptions;
  journalOptions.socketPath = journald.socketPath();
  journalOptions.identifier = "muon-trace-" + std::to_string(::getpid());
  JournaldSink journal(journalOptions);
  std::string span;
  {
    auto toText = Logger::addSink(text);
    auto toJson = Logger::addSink(json);
    auto toJournal = haveJournal ? Logger::addSink(journal) : LogAttachment();
    HttpOptions options;
    options.traceResponse = true;
    HttpServerThread server(loggingCallback, options);
    const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
    bool ok = false;
    const std::string valid = std::string("00-") + kTraceId + "-" + kParentId + "-01";
    std::string head = runCurl("--max-time 20 -D - -o /dev/null -H 'traceparent: " + valid + "' " +
                                   base + "/valid",
                               &ok);
    ASSERT_TRUE(ok) << head;
    // The server's own span of the caller's trace.
    const std::string answer = traceResponseIn(head);
    TraceContext answered;
    ASSERT_TRUE(TraceContext::parse(answer, &answered)) << head;
    EXPECT_EQ(answered.traceId(), kTraceId);
    EXPECT_NE(answered.spanId(), kParentId);
    EXPECT_EQ(answered.flags(), 1);
    span = std::string(answered.spanId());
    const std::string upper = std::string("00-4BF92F3577B34DA6A3CE929D0E0E4736-") + kParentId + "-01";
    head = runCurl("--max-time 20 -D - -o /dev/null -H 'traceparent: " + upper + "' " + base +
                       "/invalid",
                   &ok);
    ASSERT_TRUE(ok) << head;
    EXPECT_EQ(traceResponseIn(head), "") << head;
    head = runCurl("--max-time 20 -D - -o /dev/null " + base + "/none", &ok);
    ASSERT_TRUE(ok) << head;
    EXPECT_EQ(traceResponseIn(head), "") << head;
  }
  text.flush();
  json.flush();
  journal.flush();

  const std::vector<std::string> textLines = muon::test::logLinesIn(textDir);
  const std::string tracedText = lineWith(textLines, "handling /valid");
  EXPECT_NE(tracedText.find(std::string(" trace.id=") + kTraceId + " span.id=" + span + " - "),
            std::string::npos)
      << tracedText;
  for (const char* path : {"handling /invalid", "handling /none"}) {
    const std::string line = lineWith(textLines, path);
    ASSERT_NE(line, "") << path;
    EXPECT_EQ(line.find("trace.id"), std::string::npos) << line;
  }

  const std::vector<std::string> jsonLines = muon::test::logLinesIn(jsonDir);
  const nlohmann::json tracedJson = nlohmann::json::parse(lineWith(jsonLines, "handling /valid"));
  EXPECT_EQ(tracedJson.at("trace.id"), kTraceId);
  EXPECT_EQ(tracedJson.at("span.id"), span);
  for (const char* path : {"handling /invalid", "handling /none"}) {
    const nlohmann::json j = nlohmann::json::parse(lineWith(jsonLines, path));
    EXPECT_FALSE(j.contains("trace.id")) << j.dump();
    EXPECT_FALSE(j.contains("span.id")) << j.dump();
  }

  if (!haveJournal) GTEST_SKIP() << "the journal's part: no private journald: " << why;
  ASSERT_TRUE(journald.waitFor(journalOptions.identifier, 3, std::chrono::seconds(20)));
  int traced = 0;
  for (const nlohmann::json& e : journald.entries(journalOptions.identifier)) {
    const std::string message = e.at("MESSAGE");
    if (message == "handling /valid") {
      ++traced;
      EXPECT_EQ(e.at("TRACE_ID"), kTraceId);
      EXPECT_EQ(e.at("SPAN_ID"), span);
    } else {
      EXPECT_FALSE(e.contains("TRACE_ID")) << e.dump();
      EXPECT_FALSE(e.contains("SPAN_ID")) << e.dump();
    }
  }
  EXPECT_EQ(traced, 1);
}

}  // namespace
}  // namespace test
}  // namespace net
}  // namespace muon
