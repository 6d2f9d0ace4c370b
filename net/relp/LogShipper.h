// LogShipper: ships every line of a muon log basename's files to a RELP
// server (rsyslog's imrelp), one `syslog` frame per line, at least once,
// and keeps the acknowledged position in a state file so that a restart
// resumes there. muon-ship is this class in a program of its own; a server
// runs one on an EventLoop of its choice beside its AsyncLogging.
//
// What it does: reads the files in order (LogFollower), formats each line
// as RFC 5424 (SyslogFormat.h: severity and time from the line, HOSTNAME and
// PROCID from the file's name, APP-NAME from the options), and hands it to a
// RelpClient whose queue is the window: at most `window` lines are out
// unacknowledged. It looks again when inotify reports a change in the log
// directory, when notify() is called (AsyncLogging::Options::afterWrite),
// and every pollIntervalMs.
//
// The state file (ShipState.h) is replaced atomically: (1) before a line
// numbered at or past the saved horizon is sent (the horizon then becomes
// the acknowledged count plus the window, so a kill re-sends at most
// `window` lines, counted as resent), and (2) every stateSyncMs while
// acknowledgements came in, and (3) when stop() ends. A write that fails
// is retried at the next occasion and reported once to the error callback;
// meanwhile lines are held back at the horizon (nothing is sent that the
// state could not account for).
//
// Lines that cannot be shipped are counted as skipped and announced in a
// warning line (severity warning, APP-NAME as the others) shipped in their
// place: lines of a file deleted before they were read (retention past its
// hard cap), and lines longer than the RelpClient takes.
//
// Retention: with options.pin set, the shipper keeps it at the oldest file
// it has not finished (LogFilePin.h): give the same pin to the writer's
// LogFile::Options, with a hard cap.
//
// Threads: construct, start(), stop() and destroy it in the loop's thread;
// notify() and counters() from any thread. The loop must outlive it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "muon/base/LogFilePin.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TimerId.h"
#include "muon/net/relp/LogFollower.h"
#include "muon/net/relp/RelpClient.h"
#include "muon/net/relp/ShipState.h"

namespace muon {
namespace net {

class Channel;
class EventLoop;

namespace relp {

struct LogShipperOptions {
  // The log's basename, as given to LogFile or AsyncLogging.
  std::string basename;
  // Where the acknowledged position is kept; "" keeps none (every start
  // begins at the oldest file).
  std::string stateFile;
  // The RELP session; its queueLimit is set to its window.
  RelpClientOptions relp;
  // RFC 5424 facility (1: user-level) and APP-NAME ("": the basename's file name).
  int facility = 1;
  std::string appName;
  // Decrypts .enc files; null if there are none.
  std::shared_ptr<const AesKey> key;
  // Published: the oldest file not finished (see above). May be null.
  std::shared_ptr<LogFilePin> pin;
  // Looks at the files this often even without a wake-up.
  int pollIntervalMs = 500;
  // Saves the acknowledged position at most this often.
  int stateSyncMs = 200;
  // A file with a newer one beside it counts as finished once it has not
  // changed for this long (LogFollower.h).
  int finishGraceMs = 1000;
};

struct LogShipperCounters {
  uint64_t shipped = 0;  // lines acknowledged, since the state file began
  uint64_t resent = 0;   // lines sent again (after a reconnect or a restart): possible duplicates
  uint64_t skipped = 0;  // lines never shipped (see above)
};

class LogShipper {
 public:
  using ErrorCallback = std::function<void(const std::string& what)>;

  LogShipper(EventLoop* loop, const InetAddress& server, LogShipperOptions options);
  ~LogShipper();
  LogShipper(const LogShipper&) = delete;
  LogShipper& operator=(const LogShipper&) = delete;

  // Problems worth a line on stderr: a state file that cannot be written
  // (and written again), skipped lines, the session's failures ("RELP:
  // connect failed: ...": the first of an outage, then at most one per
  // options.relp.reportIntervalMs with the count and time down, and "RELP:
  // session open again after ..."). Without one set, they are logged as
  // warnings. Set before start().
  void setErrorCallback(ErrorCallback cb) { errorCallback_ = std::move(cb); }

  // Loads the state file and starts reading and connecting. False with the
  // reason in *error if the state file cannot be read or the directory
  // cannot be watched.
  bool start(std::string* error);
  // Any thread: look at the files now (cheap; many calls make one look).
  void notify();
  // The same as a function that stays safe to call after the shipper is
  // destroyed (it then does nothing), while the loop lives: what to give
  // AsyncLogging::Options::afterWrite.
  std::function<void()> wakeFunction();
  // Stops reading, waits (bounded by options.relp.closeTimeoutMs) for the
  // acknowledgements of what was sent, saves the state and closes the
  // session; then `done(clean)`: clean when everything sent was acknowledged.
  void stop(std::function<void(bool clean)> done);

  LogShipperCounters counters() const;
  // Lines sent and not yet acknowledged.
  size_t inFlight() const;

 private:
  struct Sent;
  struct Waker;
  struct Warning {
    std::string text;
    std::optional<LogPosition> after;
  };
  void onInotify();
  void pump();
  void onAck(uint64_t tag);
  void saveState(bool force);
  void report(const std::string& what);

  EventLoop* const loop_;
  LogShipperOptions options_;
  std::string filePrefix_;  // "basename." without the directory
  std::string hostFile_;  // the file hostname_ and pid_ were taken from
  std::string hostname_ = "-";  // of the file being read, from its name
  pid_t pid_ = 0;
  RelpClient client_;
  LogFollower follower_;
  ShipState state_;  // as of the last acknowledgement (saved or not)
  bool dirty_ = false;
  bool saveFailed_ = false;
  uint64_t restartResendUntil_ = 0;  // lines numbered below it were maybe sent by an earlier run
  uint64_t resentByRestart_ = 0;
  uint64_t resentBase_ = 0;  // state_.resent at start
  uint64_t savedHorizon_ = 0;  // the horizon the state file holds
  uint64_t nextLine_ = 0;    // number of the next line to send
  uint64_t nextTag_ = 1;
  std::unique_ptr<std::deque<Sent>> sent_;  // in flight, oldest first
  std::deque<Warning> warnings_;           // to be sent before the next line
  std::function<void(bool)> stopped_;
  int inotifyFd_ = -1;
  std::unique_ptr<Channel> inotifyChannel_;
  bool rescanWanted_ = true;
  bool stopping_ = false;
  TimerId pollTimer_;
  TimerId syncTimer_;
  std::shared_ptr<Waker> waker_;
  ErrorCallback errorCallback_;

  std::atomic<uint64_t> shipped_{0};
  std::atomic<uint64_t> resent_{0};
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> inFlight_{0};
};

}  // namespace relp
}  // namespace net
}  // namespace muon
