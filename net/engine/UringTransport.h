// UringTransport: a connection's socket on the io_uring engine. Internal
// header.
//
// The socket has no poll: it is driven by requests and their completions.
// One receive at a time, into a block of the loop's receive ring chosen by
// the kernel when the data arrives (UringReceiveBlocks; the block becomes
// the input Buffer when that is empty); one send at a time, from a pinned
// Buffer (the caller's Buffer taken whole, or a copy), while what comes
// meanwhile waits in the output Buffer.
//
// Ownership: each request in flight is a Request the poller owns until its
// last completion, and it holds a shared_ptr that keeps the owner (and so
// this transport, its fd and the pinned bytes) alive; receive_ / send_
// point at the requests in flight. close() cancels them; their last
// completions then only drop the reference. See docs/net.md, "The io_uring
// engine".
//
// Loop thread only, from attach() on (see Transport.h).
#pragma once

#include <atomic>
#include <memory>

#include "muon/net/Buffer.h"
#include "muon/net/internal/Transport.h"

namespace muon {
namespace net {

class UringPoller;

class UringTransport : public Transport {
 public:
  UringTransport(const Parts& parts, UringPoller* poller);
  ~UringTransport() override;

  void attach(const std::shared_ptr<void>& owner) override;
  void startReading() override;
  void stopReading() override;
  ssize_t write(std::string_view data, Buffer* source) override;
  void sendOutput() override;
  bool writing() const override { return send_ != nullptr; }
  void close() override;
  long ownerReferences() const override { return references_.load(std::memory_order_acquire); }

 private:
  class Request;

  void startReceiving();
  void received(int res, uint32_t flags);
  void deliverReceived();
  void submitSend();
  void sent(int res);
  void cancel(Request* request);

  UringPoller* const poller_;
  // This transport, sharing the owner's reference count: what a request
  // holds.
  std::weak_ptr<UringTransport> self_;
  Request* receive_;     // the receive in flight, if any
  Request* send_;        // the send in flight, if any
  Buffer sending_;       // pinned: the bytes send_ is sending
  bool reading_;         // startReading() more recent than stopReading()
  bool closed_;
  bool deliveryQueued_;  // received bytes wait for the end of the batch
  std::atomic<long> references_;  // Requests alive
};

}  // namespace net
}  // namespace muon
