#include "muon/net/inspect/LogInspector.h"

#include <algorithm>
#include <utility>

#include "muon/base/AsyncLogging.h"
#include "muon/base/internal/LoggerConfig.h"
#include "muon/base/JournaldSink.h"
#include "muon/base/SyslogSink.h"
#include "muon/net/inspect/MetricsWriter.h"

namespace muon {
namespace net {

namespace {

const char* levelName(Logger::LogLevel level) {
  static const char* const kNames[Logger::NUM_LOG_LEVELS] = {"trace", "debug", "info",
                                                             "warn",  "error", "fatal"};
  const int i = static_cast<int>(level);
  return i >= 0 && i < Logger::NUM_LOG_LEVELS ? kNames[i] : "?";
}

}  // namespace

template <typename Sink>
void LogInspector::add(std::vector<Registered<Sink>>* list, const Sink* sink, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  list->push_back(Registered<Sink>{sink, name});
}

template <typename Sink>
void LogInspector::remove(std::vector<Registered<Sink>>* list, const Sink* sink) {
  std::lock_guard<std::mutex> lock(mutex_);
  list->erase(std::remove_if(list->begin(), list->end(),
                             [sink](const Registered<Sink>& r) { return r.sink == sink; }),
              list->end());
}

void LogInspector::addLogging(const AsyncLogging* log, const std::string& name) { add(&logs_, log, name); }
void LogInspector::addSyslog(const SyslogSink* sink, const std::string& name) { add(&syslogs_, sink, name); }
void LogInspector::addJournald(const JournaldSink* sink, const std::string& name) {
  add(&journals_, sink, name);
}
void LogInspector::removeLogging(const AsyncLogging* log) { remove(&logs_, log); }
void LogInspector::removeSyslog(const SyslogSink* sink) { remove(&syslogs_, sink); }
void LogInspector::removeJournald(const JournaldSink* sink) { remove(&journals_, sink); }

std::string LogInspector::levels() {
  // One consistent configuration; its module list lives as long as the process.
  const detail::LoggerConfig& config = detail::loggerConfig();
  std::string spec = levelName(config.defaultLevel);
  std::string lines = std::string("default ") + levelName(config.defaultLevel) + "\n";
  if (config.modules != nullptr) {
    for (const detail::ModuleLevel& m : *config.modules) {
      spec += "," + m.pattern + "=" + levelName(m.level);
      lines += "module " + m.pattern + " " + levelName(m.level) + "\n";
    }
  }
  return spec + "\n" + lines;
}

bool LogInspector::setLevels(const std::string& spec, std::string* error) {
  const size_t first = spec.find_first_not_of(" \t\r\n");
  const size_t last = spec.find_last_not_of(" \t\r\n");
  const std::string trimmed = first == std::string::npos ? "" : spec.substr(first, last - first + 1);
  return Logger::setLogLevels(trimmed.c_str(), error);
}

std::string LogInspector::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string page;
  auto line = [&page](const std::string& sink, const char* counter, uint64_t value) {
    page += sink + " " + counter + " " + std::to_string(value) + "\n";
  };
  for (const Registered<AsyncLogging>& l : logs_) {
    const AsyncLogging::Stats s = l.sink->stats();
    line(l.name, "lines_written", s.linesWritten);
    line(l.name, "messages_dropped", s.messagesDropped);
    line(l.name, "buffers_dropped", s.buffersDropped);
    line(l.name, "producer_waits", s.producerWaits);
    line(l.name, "crash_safe", s.crashSafe ? 1 : 0);
    line(l.name, "lines_recovered", s.linesRecovered);
    line(l.name, "buffers_mapped", s.buffersMapped);
    line(l.name, "buffers_held", s.buffersHeld);
    line(l.name, "file_written_bytes", s.file.writtenBytes);
    line(l.name, "file_lost_bytes", s.file.lostBytes);
    line(l.name, "file_write_errors", s.file.writeErrors);
    line(l.name, "files_created", s.file.filesCreated);
    const std::string spool = l.sink->spoolPath();
    page += l.name + " spool " + (spool.empty() ? "-" : spool) + "\n";
  }
  for (const Registered<SyslogSink>& s : syslogs_) {
    const SyslogSink::Stats st = s.sink->stats();
    line(s.name, "sent", st.sent);
    line(s.name, "dropped", st.dropped);
    line(s.name, "lost", st.lost);
    line(s.name, "reconnects", st.reconnects);
  }
  for (const Registered<JournaldSink>& j : journals_) {
    const JournaldSink::Stats st = j.sink->stats();
    const std::pair<const char*, uint64_t> counters[] = {
        {"sent", st.sent}, {"sent_via_memfd", st.viaMemfd}, {"dropped", st.dropped},
        {"lost", st.lost}, {"outages", st.outages}};
    for (const auto& c : counters) line(j.name, c.first, c.second);
  }
  line("logger", "lines_truncated", Logger::linesTruncated());
  return page;
}

void LogInspector::writeMetrics(MetricsWriter* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<AsyncLogging::Stats> a;
  for (const Registered<AsyncLogging>& l : logs_) a.push_back(l.sink->stats());
  std::vector<SyslogSink::Stats> s;
  for (const Registered<SyslogSink>& sy : syslogs_) s.push_back(sy.sink->stats());
  std::vector<JournaldSink::Stats> j;
  for (const Registered<JournaldSink>& jo : journals_) j.push_back(jo.sink->stats());

  using W = MetricsWriter;
  out->family("muon_log_lines_written_total", W::kCounter,
              "Log lines handed to the sink's output: the log file (AsyncLogging), the syslog socket (SyslogSink) or journald's (JournaldSink).");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].linesWritten);
  for (size_t i = 0; i < s.size(); ++i) out->sample({{"sink", syslogs_[i].name}}, s[i].sent);
  for (size_t i = 0; i < j.size(); ++i) out->sample({{"sink", journals_[i].name}}, j[i].sent);

  out->family("muon_log_lines_dropped_total", W::kCounter,
              "Log lines dropped before output, by cause: buffers_full (AsyncLogging's kDrop policy, or no buffer to be had), queue_full (SyslogSink's and JournaldSink's queues).");
  for (size_t i = 0; i < a.size(); ++i)
    out->sample({{"sink", logs_[i].name}, {"cause", "buffers_full"}}, a[i].messagesDropped);
  for (size_t i = 0; i < s.size(); ++i)
    out->sample({{"sink", syslogs_[i].name}, {"cause", "queue_full"}}, s[i].dropped);
  for (size_t i = 0; i < j.size(); ++i)
    out->sample({{"sink", journals_[i].name}, {"cause", "queue_full"}}, j[i].dropped);

  out->family("muon_log_lines_lost_total", W::kCounter,
              "Log lines whose output failed, by cause: send_failed (SyslogSink, JournaldSink). A log file's failed writes are counted in bytes (muon_log_bytes_lost_total).");
  for (size_t i = 0; i < s.size(); ++i)
    out->sample({{"sink", syslogs_[i].name}, {"cause", "send_failed"}}, s[i].lost);
  for (size_t i = 0; i < j.size(); ++i)
    out->sample({{"sink", journals_[i].name}, {"cause", "send_failed"}}, j[i].lost);

  out->family("muon_log_bytes_written_total", W::kCounter, "Bytes that reached the sink's log files.");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].file.writtenBytes);

  out->family("muon_log_bytes_lost_total", W::kCounter,
              "Bytes given to the sink's log file that never reached it, by cause: write_failed.");
  for (size_t i = 0; i < a.size(); ++i)
    out->sample({{"sink", logs_[i].name}, {"cause", "write_failed"}}, a[i].file.lostBytes);

  out->family("muon_log_write_errors_total", W::kCounter, "Failed write(2) or open(2) calls on the sink's log files.");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].file.writeErrors);

  out->family("muon_log_files_created_total", W::kCounter, "Log files the sink has created (rolls included).");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].file.filesCreated);

  out->family("muon_log_buffers_dropped_total", W::kCounter, "AsyncLogging buffers dropped whole under the kDrop policy.");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].buffersDropped);

  out->family("muon_log_buffers_mapped_total", W::kCounter, "AsyncLogging buffers given memory so far.");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].buffersMapped);

  out->family("muon_log_buffers_held", W::kGauge, "AsyncLogging buffers that have memory now.");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].buffersHeld);

  out->family("muon_log_producer_waits_total", W::kCounter,
              "Times a logging thread waited for room (AsyncLogging's kBlock policy).");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].producerWaits);

  out->family("muon_log_lines_recovered_total", W::kCounter,
              "Lines recovered from dead processes' spools when the sink was constructed (crash-safe mode).");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, a[i].linesRecovered);

  out->family("muon_log_crash_safe", W::kGauge, "1 if the sink keeps its buffers in a spool file (crash-safe mode), else 0.");
  for (size_t i = 0; i < a.size(); ++i) out->sample({{"sink", logs_[i].name}}, uint64_t{a[i].crashSafe ? 1u : 0u});

  out->family("muon_log_syslog_reconnects_total", W::kCounter, "SyslogSink connections made after the first.");
  for (size_t i = 0; i < s.size(); ++i) out->sample({{"sink", syslogs_[i].name}}, s[i].reconnects);

  out->family("muon_log_lines_truncated_total", W::kCounter,
              "Log lines of this process whose message was cut to fit a line (they end in log.truncated=true), whichever sink took them.");
  out->sample({}, Logger::linesTruncated());
}

}  // namespace net
}  // namespace muon
