#include "muon/net/relp/ShipState.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace muon {
namespace net {
namespace relp {

namespace {

constexpr char kMagic[] = "muon-ship-state 1";

bool number(const std::string& text, uint64_t* value) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  *value = std::stoull(text);
  return true;
}

}  // namespace

bool ShipState::load(const std::string& path, ShipState* state, bool* exists, std::string* error) {
  *exists = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    *error = "cannot read state file " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 65536) text.append(buf, static_cast<size_t>(n));
  const int readErrno = errno;
  ::close(fd);
  if (n < 0) {
    *error = "cannot read state file " + path + ": " + std::strerror(readErrno);
    return false;
  }
  *exists = true;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMagic) {
    *error = "state file " + path + " is not a muon-ship state (its first line is not '" +
             kMagic + "')";
    return false;
  }
  ShipState s;
  int seen = 0;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? std::string() : line.substr(space + 1);
    bool ok = true;
    if (key == "file") {
      s.acked.file = value;
      ok = value.find('/') == std::string::npos;
    } else if (key == "offset") {
      ok = number(value, &s.acked.offset);
    } else if (key == "acked") {
      ok = number(value, &s.ackedLines);
    } else if (key == "horizon") {
      ok = number(value, &s.horizon);
    } else if (key == "resent") {
      ok = number(value, &s.resent);
    } else if (key == "skipped") {
      ok = number(value, &s.skipped);
    } else {
      ok = false;
    }
    if (!ok) {
      *error = "state file " + path + ": bad line '" + line + "'";
      return false;
    }
    ++seen;
  }
  if (seen != 6) {
    *error = "state file " + path + " is incomplete (" + std::to_string(seen) + " of 6 fields)";
    return false;
  }
  *state = s;
  return true;
}

bool ShipState::save(const std::string& path, std::string* error) const {
  std::string text = std::string(kMagic) + "\nfile " + acked.file + "\noffset " +
                     std::to_string(acked.offset) + "\nacked " + std::to_string(ackedLines) +
                     "\nhorizon " + std::to_string(horizon) + "\nresent " + std::to_string(resent) +
                     "\nskipped " + std::to_string(skipped) + "\n";
  const std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot write state file " + temp + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "cannot write state file " + temp + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      ::close(fd);
      ::unlink(temp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    *error = "cannot replace state file " + path + ": " + std::strerror(errno);
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace relp
}  // namespace net
}  // namespace muon
