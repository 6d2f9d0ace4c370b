// ShipState: what a shipper (LogShipper) keeps in its state file: the
// position the server has acknowledged, the horizon (how far lines may have
// been sent), and the counts since the file was created. Written as a
// temporary file renamed over the old one, so a reader (a restart) sees
// the old state or the new one whole, never a mix. No fsync: a process
// crash keeps the page cache; a machine crash may bring back an older state,
// which costs re-sent lines, never lost ones.
//
// The file is text, one "key value" a line:
//   muon-ship-state 1
//   file server.20261127-031500.host.4242.log
//   offset 1048576
//   acked 123456
//   horizon 123584
//   resent 12
//   skipped 0
// Threads: a plain value; the functions touch only the named file.
#pragma once

#include <cstdint>
#include <string>

#include "muon/net/relp/LogFollower.h"

namespace muon {
namespace net {
namespace relp {

struct ShipState {
  LogPosition acked;     // the position after the last acknowledged line
  uint64_t ackedLines = 0;  // lines acknowledged since the state began
  // Lines numbered below this may have been sent: on a restart the lines
  // from ackedLines up to it are sent again and counted as resent.
  uint64_t horizon = 0;
  uint64_t resent = 0;
  uint64_t skipped = 0;

  // False with the reason in *error if the file exists but cannot be read
  // or is not a state file; a missing file is a fresh state (true, *exists false).
  static bool load(const std::string& path, ShipState* state, bool* exists, std::string* error);
  // False with the reason in *error if it could not be written.
  bool save(const std::string& path, std::string* error) const;
};

}  // namespace relp
}  // namespace net
}  // namespace muon
