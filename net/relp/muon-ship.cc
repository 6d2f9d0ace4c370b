// muon-ship --relp HOST:PORT --state FILE [--window N] [--key-file K]
//           [--app NAME] [--report-interval S]
//           [--tls-ca FILE [--tls-cert FILE --tls-key FILE]] BASENAME
// Ships every line of a muon log basename's files (rolled, current, .zst,
// .enc) to a RELP server (rsyslog's imrelp), at least once, following new
// files and rolls; the acknowledged position is kept in FILE, so a restart
// (after a kill too) resumes there. SIGTERM or SIGINT: waits (bounded) for
// the outstanding acknowledgements, prints one line
//   shipped N lines, resent M, skipped K
// (counts since FILE was created) and exits 0. Bad usage, a bad address or
// an unreadable state file: a message on stderr, exit 2. A LogShipper
// (LogShipper.h) on one EventLoop in the main thread; docs/logging.md, "Shipping".
// With --tls-ca, RELP goes over TLS (imrelp's tls="on"): the server's
// certificate must chain to that CA and name HOST; --tls-cert and --tls-key
// are ours, for a server that authenticates its clients. A handshake that
// fails is reported on stderr with its reason ("muon-ship: RELP: TLS
// refused: certificate verify failed: ...") and retried with the back-off;
// nothing is sent meanwhile. While the server stays away (down, refusing,
// or refusing our TLS), stderr gets the first failure, then at most one line
// per --report-interval (10 s) with the count and the time down, and one
// line when a session opens again.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "muon/base/Logging.h"
#include "muon/base/filestages/AesGcmStage.h"
#include "muon/net/Channel.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TlsContext.h"
#include "muon/net/relp/LogShipper.h"

namespace {

void usage(FILE* out) {
  std::fputs(
      "usage: muon-ship --relp HOST:PORT --state FILE [--window N] [--key-file K]\n"
      "                 [--app NAME] [--report-interval S]\n"
      "                 [--tls-ca FILE [--tls-cert FILE --tls-key FILE]] BASENAME\n"
      "Ships every line of the log files of BASENAME (as given to muon's LogFile or\n"
      "AsyncLogging: rolled files, the current one, .zst and .enc ones) to a RELP\n"
      "server such as rsyslog's imrelp, one RFC 5424 message per line, at least once,\n"
      "and keeps following new lines and files. FILE keeps the position the server\n"
      "has acknowledged: a restart resumes there (lines sent but not acknowledged are\n"
      "sent again, at most N). SIGTERM: waits (bounded) for the acknowledgements and\n"
      "prints 'shipped N lines, resent M, skipped K' (counts since FILE began).\n"
      "  --relp HOST:PORT  the server (numeric address or host name)\n"
      "  --state FILE      the state file (created if missing)\n"
      "  --window N        frames sent and not yet acknowledged, at most (128)\n"
      "  --key-file K      the key of .enc files (32 bytes or 64 hex digits)\n"
      "  --app NAME        APP-NAME of the messages (default: BASENAME's file name)\n"
      "  --report-interval S  while the server stays away: the first failure, then\n"
      "                    at most one line per S seconds (10), then one when it is back\n"
      "  --tls-ca FILE     RELP over TLS; the CA (PEM) the server's certificate must chain to\n"
      "  --tls-cert FILE   our certificate chain (PEM), for servers that check clients\n"
      "  --tls-key FILE    its private key (PEM)\n"
      "Exit status: 0 after SIGTERM, 1 on a failure while running, 2 on bad usage,\n"
      "a bad address or an unreadable state file.\n",
      out);
}

int bad(const std::string& what) {
  std::fprintf(stderr, "muon-ship: %s\n", what.c_str());
  return 2;
}

// "HOST:PORT", "[V6]:PORT"; a host name is resolved. False with the
// reason in *why.
bool parseServer(const std::string& text, muon::net::InetAddress* out, std::string* why) {
  if (muon::net::InetAddress::parse(text, out)) return true;
  *why = "want HOST:PORT";
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::atoi(port.c_str()) == 0 || std::atoi(port.c_str()) > 65535) {
    return false;
  }
  *out = muon::net::InetAddress(static_cast<uint16_t>(std::atoi(port.c_str())));
  const std::string host = text.substr(0, colon);
  std::string error;
  if (muon::net::InetAddress::resolve(host, out, &error)) return true;
  *why = "host '" + host + "' could not be resolved: " + error;
  return false;
}

}  // namespace

int main(int argc, char* argv[]) {
  std::string relp, state, keyFile, app, basename, tlsCa, tlsCert, tlsKey;
  long window = 128;
  double reportSeconds = muon::net::relp::RelpClientOptions().reportIntervalMs / 1000.0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* to) {
      if (i + 1 == argc) return false;
      *to = argv[++i];
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    std::string text;
    if (arg == "--relp" || arg == "--state" || arg == "--window" || arg == "--key-file" ||
        arg == "--app" || arg == "--tls-ca" || arg == "--tls-cert" || arg == "--tls-key" ||
        arg == "--report-interval") {
      if (!value(&text)) {
        usage(stderr);
        return bad(arg + " needs a value");
      }
      if (arg == "--relp") relp = text;
      if (arg == "--state") state = text;
      if (arg == "--key-file") keyFile = text;
      if (arg == "--app") app = text;
      if (arg == "--tls-ca") tlsCa = text;
      if (arg == "--tls-cert") tlsCert = text;
      if (arg == "--tls-key") tlsKey = text;
      if (arg == "--window") {
        char* end = nullptr;
        window = std::strtol(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || window < 1 || window > 100000) {
          return bad("bad --window '" + text + "': want a number from 1 to 100000");
        }
      }
      if (arg == "--report-interval") {
        char* end = nullptr;
        reportSeconds = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(reportSeconds >= 0.001 && reportSeconds <= 86400)) {
          return bad("bad --report-interval '" + text + "': want seconds from 0.001 to 86400");
        }
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      usage(stderr);
      return bad("unknown option '" + arg + "'");
    } else if (basename.empty()) {
      basename = arg;
    } else {
      usage(stderr);
      return bad("one BASENAME only ('" + basename + "', then '" + arg + "')");
    }
  }
  if (relp.empty() || state.empty() || basename.empty()) {
    usage(stderr);
    return bad("--relp, --state and BASENAME are required");
  }
  muon::net::InetAddress server;
  std::string why;
  if (!parseServer(relp, &server, &why)) return bad("bad --relp '" + relp + "': " + why);
  if (tlsCa.empty() && !(tlsCert.empty() && tlsKey.empty())) {
    return bad("--tls-cert and --tls-key need --tls-ca");
  }
  if (tlsCert.empty() != tlsKey.empty()) return bad("--tls-cert and --tls-key go together");

  // The library's own log lines (connecting, errors) go to stderr: stdout
  // has the one line at the end.
  muon::Logger::setOutput([](const char* msg, size_t len) {
    size_t done = 0;
    while (done < len) {
      ssize_t n = ::write(STDERR_FILENO, msg + done, len - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  });
  muon::Logger::setLogLevel(muon::Logger::WARN);

  muon::net::relp::LogShipperOptions options;
  options.basename = basename;
  options.stateFile = state;
  options.appName = app;
  options.relp.window = static_cast<size_t>(window);
  options.relp.reportIntervalMs = static_cast<int>(reportSeconds * 1000 + 0.5);
  if (!tlsCa.empty()) {
    muon::net::TlsClientOptions tls;
    tls.caFile = tlsCa;
    tls.certificateChainFile = tlsCert;
    tls.privateKeyFile = tlsKey;
    // The name HOST was given as (an address: checked as one).
    tls.serverName = relp.substr(0, relp.rfind(':'));
    if (tls.serverName.size() > 2 && tls.serverName.front() == '[') {
      tls.serverName = tls.serverName.substr(1, tls.serverName.size() - 2);
    }
    std::string error;
    options.relp.transportLayer = muon::net::TlsContext::newClient(tls, &error);
    if (!options.relp.transportLayer) return bad("TLS: " + error);
  }
  if (!keyFile.empty()) {
    auto key = std::make_shared<muon::AesKey>();
    std::string error;
    if (!muon::loadAesKey(keyFile, key.get(), &error)) return bad(error);
    options.key = key;
  }

  // SIGTERM and SIGINT arrive through a signalfd on the loop.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  const int signalFd = ::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signalFd < 0) return bad(std::string("signalfd: ") + std::strerror(errno));

  muon::net::EventLoop loop;
  muon::net::relp::LogShipper shipper(&loop, server, options);
  shipper.setErrorCallback(
      [](const std::string& what) { std::fprintf(stderr, "muon-ship: %s\n", what.c_str()); });
  std::string error;
  if (!shipper.start(&error)) return bad(error);

  bool stopping = false;
  muon::net::Channel signalChannel(&loop, signalFd);
  signalChannel.setReadCallback([&](muon::Timestamp) {
    struct signalfd_siginfo info;
    while (::read(signalFd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    }
    if (stopping) return;
    stopping = true;
    shipper.stop([&](bool clean) {
      if (!clean) {
        std::fprintf(stderr, "muon-ship: %zu lines were not acknowledged in time: they are sent "
                             "again at the next start\n", shipper.inFlight());
      }
      loop.quit();
    });
  });
  signalChannel.enableReading();
  loop.loop();
  signalChannel.disableAll();
  signalChannel.remove();
  ::close(signalFd);

  const muon::net::relp::LogShipperCounters c = shipper.counters();
  std::printf("shipped %llu lines, resent %llu, skipped %llu\n",
              static_cast<unsigned long long>(c.shipped), static_cast<unsigned long long>(c.resent),
              static_cast<unsigned long long>(c.skipped));
  std::fflush(stdout);
  return 0;
}
