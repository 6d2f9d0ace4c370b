// ReadinessTransport: a connection's socket on the readiness engines (epoll,
// poll). Internal header.
//
// A Channel on the socket: when the poller says it is readable, one read(2)
// into the input Buffer; while the output Buffer holds bytes, the channel
// also waits for writability and writes them. Loop thread only, from
// attach() on (see Transport.h).
#pragma once

#include "muon/net/Channel.h"
#include "muon/net/internal/Transport.h"

namespace muon {
namespace net {

class ReadinessTransport : public Transport {
 public:
  explicit ReadinessTransport(const Parts& parts);
  ~ReadinessTransport() override;

  void attach(const std::shared_ptr<void>& owner) override { channel_.tie(owner); }
  void startReading() override { channel_.enableReading(); }
  void stopReading() override { channel_.disableReading(); }
  ssize_t write(std::string_view data, Buffer* source) override;
  void sendOutput() override { channel_.enableWriting(); }
  bool writing() const override { return channel_.isWriting(); }
  void close() override;
  void detach() override { channel_.remove(); }

 private:
  void handleRead(Timestamp receiveTime);
  void handleWrite();
  void handleError();

  Channel channel_;
  bool closed_;  // close() was called: events still queued are stale
};

}  // namespace net
}  // namespace muon
