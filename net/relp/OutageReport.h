// OutageReport: what a client that keeps retrying says about it, so that a
// server away for a while costs a few lines instead of one per attempt.
// An outage begins with a failure and ends when the server takes us again;
// its lines are:
//   - the first failure, as given, at once;
//   - while failures go on, at most one line per interval: the latest
//     failure with how many there were and for how long
//     ("connect failed: connect: Connection refused (40 failures in 10.0 s,
//     still trying)");
//   - one line when it is over ("session open again after 16.1 s down,
//     64 failures").
// It decides and words the lines; its owner prints them. Times are the
// owner's steady clock in milliseconds. Not thread-safe: the owner's thread.
#pragma once

#include <cstdint>
#include <string>

namespace muon {
namespace net {
namespace relp {

class OutageReport {
 public:
  explicit OutageReport(int intervalMs);

  // A failure at nowMs, in words. The line to print, or "" when it is only
  // counted (a line was printed less than an interval ago).
  std::string failed(int64_t nowMs, const std::string& what);
  // The server took us again at nowMs (`how`: "session open again"). The
  // line to print, or "" when nothing failed since the last time.
  std::string recovered(int64_t nowMs, const std::string& how);

  bool down() const { return failures_ > 0; }

 private:
  const int intervalMs_;
  int64_t downSinceMs_ = 0;
  int64_t lastLineMs_ = 0;
  uint64_t failures_ = 0;  // in this outage
};

}  // namespace relp
}  // namespace net
}  // namespace muon
