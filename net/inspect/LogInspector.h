// LogInspector: the inspector's logging pages and the logging half of
// /metrics. It shows and changes the Logger's levels, and reads the counters
// of the sinks the program registers (addLogging, addSyslog, addJournald):
// AsyncLogging (with its LogFile and spool), SyslogSink and JournaldSink. A registered sink must
// outlive the LogInspector, or be removed first.
//
// Thread safety: every member from any thread (a mutex guards the sinks).
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace muon {

class AsyncLogging;
class JournaldSink;
class SyslogSink;

namespace net {

class MetricsWriter;

class LogInspector {
 public:
  // `name` labels the sink's counters (sink="name" in /metrics).
  void addLogging(const AsyncLogging* log, const std::string& name);
  void addSyslog(const SyslogSink* sink, const std::string& name);
  void addJournald(const JournaldSink* sink, const std::string& name);
  void removeLogging(const AsyncLogging* log);
  void removeSyslog(const SyslogSink* sink);
  void removeJournald(const JournaldSink* sink);

  // The levels in MUON_LOG_LEVEL's syntax ("info,TcpConnection=trace"),
  // then one line per level: "default info", "module TcpConnection trace".
  static std::string levels();
  // Applies `spec` (MUON_LOG_LEVEL's syntax, white space around it ignored)
  // at once. False with the reason in *error when it is malformed: nothing
  // changes then.
  static bool setLevels(const std::string& spec, std::string* error);

  // Every counter of every registered sink, "sink counter value" a line,
  // then the process's own: "logger lines_truncated N".
  std::string stats() const;
  // The logging families of /metrics.
  void writeMetrics(MetricsWriter* out) const;

 private:
  // A registered sink and its label.
  template <typename Sink>
  struct Registered {
    const Sink* sink;
    std::string name;
  };
  template <typename Sink>
  void add(std::vector<Registered<Sink>>* list, const Sink* sink, const std::string& name);
  template <typename Sink>
  void remove(std::vector<Registered<Sink>>* list, const Sink* sink);

  mutable std::mutex mutex_;
  std::vector<Registered<AsyncLogging>> logs_;
  std::vector<Registered<SyslogSink>> syslogs_;
  std::vector<Registered<JournaldSink>> journals_;
};

}  // namespace net
}  // namespace muon
