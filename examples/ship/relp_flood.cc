// relp_flood --relp HOST:PORT [--window N] FILE...
// The ceiling of the shipping benchmark (examples/bench/ship_bench.sh): a
// bare RELP sender that does nothing but write pre-built frames and read
// acknowledgements. It reads the plain muon log FILEs, turns every line into
// the RFC 5424 message muon-ship would send (rfc5424::formatLine) and into a
// `syslog` frame, all before it connects; then, on one blocking-free socket,
// it opens a session and keeps `window` frames unacknowledged, writing each
// refill as one contiguous range of the pre-built bytes. No reconnects: any
// error ends the run with status 1.
//
// Stdout, one line each:
//   sending at EPOCH_NS cpu CPU_NS   (frames built; the clock and the
//                                     process's CPU time before connecting)
//   acknowledged N frames in S s, cpu C s
// Exit status 0 when every frame was acknowledged and `close` answered.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "CommandLine.h"
#include "muon/base/Logging.h"
#include "muon/base/SyslogFormat.h"
#include "muon/base/TimeZone.h"
#include "muon/net/InetAddress.h"
#include "muon/net/relp/RelpFrame.h"
#include "muon/net/relp/RelpParser.h"
#include "muon/net/relp/RelpResponse.h"

namespace relp = muon::net::relp;

namespace {

int usage(bool help = false) {
  std::fputs("usage: relp_flood --relp HOST:PORT [--window N] FILE...\n", help ? stdout : stderr);
  return help ? 0 : 2;
}

int64_t cpuNs() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return (static_cast<int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1000000000 +
         (static_cast<int64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1000;
}

int64_t epochNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int fail(const std::string& what) {
  std::fprintf(stderr, "relp_flood: %s\n", what.c_str());
  return 1;
}

// Reads one response frame from `fd` (blocking in poll), leftovers kept in *in.
bool readFrame(int fd, relp::RelpParser* parser, std::string* in, relp::RelpFrameData* frame,
               std::string* error) {
  for (;;) {
    size_t used = 0;
    const relp::RelpParser::Status s = parser->parse(in->data(), in->size(), &used);
    in->erase(0, used);
    if (s == relp::RelpParser::Status::kFrame) {
      *frame = std::move(parser->frame());
      return true;
    }
    if (s == relp::RelpParser::Status::kError) {
      *error = std::string("bad response: ") + relp::RelpParser::errorName(parser->error());
      return false;
    }
    struct pollfd p = {fd, POLLIN, 0};
    ::poll(&p, 1, -1);
    char buf[65536];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      *error = n == 0 ? "the server closed the connection" : std::strerror(errno);
      return false;
    }
    if (n > 0) in->append(buf, static_cast<size_t>(n));
  }
}

bool writeAll(int fd, const char* data, size_t len, std::string* error) {
  while (len > 0) {
    const ssize_t n = ::write(fd, data, len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      struct pollfd p = {fd, POLLOUT, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    if (n <= 0) {
      *error = std::string("write: ") + std::strerror(errno);
      return false;
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  if (muon::examples::helpRequested(argc, argv)) return usage(true);
  std::string relpAddress;
  long window = 128;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--relp" && i + 1 < argc) {
      relpAddress = argv[++i];
    } else if (arg == "--window" && i + 1 < argc) {
      if (!muon::examples::parseInt(argv[++i], 1, 100000, &window)) return usage();
    } else if (!arg.empty() && arg[0] == '-') {
      return usage();
    } else {
      files.push_back(arg);
    }
  }
  muon::net::InetAddress server;
  if (files.empty() || !muon::net::InetAddress::parse(relpAddress, &server)) return usage();

  // The frames, txnr 2, 3, ... (1 is the open), end to end; ends[i] is where
  // frame i ends, so frames [a, b) are the bytes [ends[a-1], ends[b-1]).
  std::string frames;
  std::vector<size_t> ends;
  uint32_t txnr = 2;
  const muon::TimeZone zone = muon::Logger::timeZone();
  for (const std::string& path : files) {
    std::ifstream in(path);
    if (!in) return fail("cannot read " + path);
    std::string line;
    while (std::getline(in, line)) {
      relp::appendFrame(&frames, txnr, "syslog",
                        muon::rfc5424::formatLine(line, 1, "benchhost", "app", 4242, zone));
      txnr = relp::nextTxnr(txnr);
      ends.push_back(frames.size());
    }
  }
  const size_t total = ends.size();

  const int64_t startNs = epochNs();
  const int64_t startCpu = cpuNs();
  std::printf("sending at %lld cpu %lld\n", static_cast<long long>(startNs),
              static_cast<long long>(startCpu));
  std::fflush(stdout);

  const int fd = ::socket(server.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, server.getSockAddr(), server.sockLen()) != 0) {
    return fail("connect " + relpAddress + ": " + std::strerror(errno));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  std::string error;
  relp::RelpParser parser;
  std::string in;
  relp::RelpFrameData frame;
  relp::RelpResponse rsp;
  const std::string open = relp::encodeFrame(1, "open", "relp_version=0\nrelp_software=relp_flood\ncommands=syslog");
  if (!writeAll(fd, open.data(), open.size(), &error) || !readFrame(fd, &parser, &in, &frame, &error)) {
    return fail("open: " + error);
  }
  if (frame.txnr != 1 || !relp::parseResponse(frame.data, &rsp) || rsp.code != 200) {
    return fail("open refused: " + frame.data);
  }

  size_t sent = 0, acked = 0;
  while (acked < total) {
    const size_t end = std::min(total, acked + static_cast<size_t>(window));
    if (sent < end) {
      const size_t from = sent == 0 ? 0 : ends[sent - 1];
      if (!writeAll(fd, frames.data() + from, ends[end - 1] - from, &error)) return fail(error);
      sent = end;
    }
    // Every response already read is taken before the next refill.
    do {
      if (!readFrame(fd, &parser, &in, &frame, &error)) return fail(error);
      if (frame.command != "rsp" || !relp::parseResponse(frame.data, &rsp) || rsp.code != 200) {
        return fail("frame " + std::to_string(frame.txnr) + " answered: " + frame.data);
      }
      ++acked;
    } while (!in.empty() && acked < total);
  }
  const std::string close = relp::encodeFrame(txnr, "close", {});
  if (!writeAll(fd, close.data(), close.size(), &error) || !readFrame(fd, &parser, &in, &frame, &error)) {
    return fail("close: " + error);
  }
  ::close(fd);
  std::printf("acknowledged %zu frames in %.3f s, cpu %.3f s\n", acked,
              static_cast<double>(epochNs() - startNs) / 1e9,
              static_cast<double>(cpuNs() - startCpu) / 1e9);
  return 0;
}
