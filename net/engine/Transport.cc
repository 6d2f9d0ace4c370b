#include "muon/net/internal/Transport.h"

#include "muon/net/internal/SocketsOps.h"

namespace muon {
namespace net {

Transport::Transport(const Parts& parts)
    : loop_(parts.loop),
      fd_(parts.fd),
      name_(*parts.name),
      owner_(parts.owner),
      input_(parts.input),
      output_(parts.output) {}

Transport::~Transport() = default;

TransportLayer::~TransportLayer() = default;

void Transport::shutdownWrite() { sockets::shutdownWrite(fd_); }

}  // namespace net
}  // namespace muon
