// TlsTransport: TLS between a connection's plaintext buffers and the
// engine's transport. Internal header: made by TlsContext::newTransport.
//
//   TcpConnection  -- input / output Buffers (plaintext) --
//   TlsTransport   -- SSL object, memory BIO --
//   cipher_.in / cipher_.out (ciphertext)
//   ReadinessTransport or UringTransport -- the socket --
//
// The engine's transport reads ciphertext into cipher_.in and sends
// cipher_.out, reporting to this transport as its owner; OpenSSL reads and
// writes those two Buffers through a BIO of our own (no copy into a BIO of
// OpenSSL's), so it never touches the socket and the loop never blocks. The
// handshake runs on the same reports; once it is done the connection hears
// handshakeDone() and is up. A TLS 1.3 client hears the server's verdict on
// its certificate only after that: a fatal alert before any data is
// reported as handshakeFailed() all the same (Transport.h). Decrypted bytes
// go into the connection's input Buffer, so its input limit bounds
// plaintext; plaintext the connection queues is encrypted a batch at a
// time as the socket takes the previous one, so the output Buffer still
// tells what waits (the high-water mark).
//
// Loop thread only, from attach() on (see Transport.h).
#pragma once

#include <openssl/types.h>

#include <memory>
#include <string>

#include "muon/net/Buffer.h"
#include "muon/net/TimerId.h"
#include "muon/net/internal/Transport.h"

namespace muon {
namespace net {

class TlsContext;

class TlsTransport : public Transport, private TransportOwner {
 public:
  // Takes `ssl` (set up by the context for its side and peer).
  TlsTransport(const Parts& parts, std::shared_ptr<const TlsContext> context, SSL* ssl);
  ~TlsTransport() override;

  void attach(const std::shared_ptr<void>& owner) override;
  void startReading() override;
  void stopReading() override;
  ssize_t write(std::string_view data, Buffer* source) override;
  void sendOutput() override;
  bool writing() const override;
  void shutdownWrite() override;
  void close() override;
  void detach() override { inner_->detach(); }
  long ownerReferences() const override { return inner_->ownerReferences(); }
  bool needsHandshake() const override { return true; }
  const SecurityInfo* security() const override {
    return info_.protocol.empty() ? nullptr : &info_;
  }

  // The ciphertext, both ways; the BIO's data.
  struct Cipher {
    Buffer in;   // received, not yet decrypted
    Buffer out;  // encrypted, not yet handed to the socket
  };

 private:
  enum State {
    kHandshaking,
    kEstablished,
    kFailing,  // the handshake failed; our alert is still being sent
    kFailed,   // handshakeFailed() reported: the owner closes
    kClosed,
  };

  // What the engine's transport reports.
  void bytesReceived(Timestamp receiveTime) override;
  void outputDrained() override;
  void peerClosed() override;
  void hungUp() override;
  void ioFailed(const char* where, int err) override;
  void handshakeDone() override {}
  void handshakeFailed(const std::string&) override {}

  void advanceHandshake();
  void established();
  void fail(const std::string& reason);
  void reportFailure();
  void decrypt(Timestamp receiveTime);
  // Encrypts the head of data (one batch at most); how much it took, or -1.
  ssize_t encrypt(std::string_view data);
  // Encrypts what the output Buffer holds while the socket takes it.
  void pumpOutput();
  // Hands cipher_.out to the engine's transport. 0, or the errno of a
  // failed write.
  int flush();
  // A write failed with err: true if it is left for reading to report (a
  // TLS 1.3 client that has heard nothing yet: see refusedAfterHandshake);
  // what waited to be written is dropped.
  bool leftToReading(int err);
  // After SSL_read failed, before failureReason(): whether it is a TLS 1.3
  // server's fatal alert that came before any data, i.e. its refusal of our
  // certificate (reported as handshakeFailed, although handshakeDone was).
  bool refusedAfterHandshake() const;
  // After an SSL call failed: why, in words, from OpenSSL's error queue.
  std::string failureReason(int sslError);

  const std::shared_ptr<const TlsContext> context_;
  SSL* const ssl_;
  Cipher cipher_;
  const std::unique_ptr<Transport> inner_;
  State state_;
  bool appReading_;        // the connection's startReading/stopReading
  bool appWriting_;        // its bytes are being sent: report outputDrained
  bool drainQueued_;       // outputDrained() is queued for after sendOutput()
  bool shutdownPending_;   // close_notify queued: our FIN once it is out
  bool peerClosedReported_;
  bool dataReceived_;  // the peer has sent application data
  std::weak_ptr<void> ownerRef_;  // the connection; keeps this alive
  TimerId handshakeTimer_;
  SecurityInfo info_;
  std::string failure_;  // why the handshake failed
  std::string recordFailure_;  // why a record after the handshake was refused (ioFailed's text)
};

}  // namespace net
}  // namespace muon
