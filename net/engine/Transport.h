// Transport: how a TcpConnection's bytes meet its socket. Internal header.
//
// TcpConnection keeps the lifecycle, the callbacks and the two Buffers; its
// Transport moves bytes between those Buffers and the socket, the way the
// loop's engine does it:
//  * ReadinessTransport (epoll, poll): a Channel, and read(2) / write(2)
//    when the poller says the socket is ready;
//  * UringTransport (io_uring): receive and send requests, and their
//    completions.
// The poller makes it, once, when the connection is made
// (Poller::newTransport), so the connection never asks which engine it runs
// on. The transport reports what the socket did to its TransportOwner: the
// connection, or a transport that wraps this one (TLS does, net/tls/: it
// turns the bytes of the transport below into the bytes of the connection
// above; see docs/net.md, "Transports").
//
// A transport is made in any thread (it only builds itself) and used only in
// its loop's thread from attach() on.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "muon/base/Timestamp.h"

namespace muon {
namespace net {

class Buffer;
class EventLoop;
class Transport;

// What a security layer (TLS: muon::tls) negotiated for a connection.
struct SecurityInfo {
  std::string protocol;         // "TLSv1.3"
  std::string cipher;           // "TLS_AES_128_GCM_SHA256"
  std::string alpn;             // the application protocol agreed on, or ""
  std::string peerCertificate;  // the peer certificate's subject, or "" (none)
  bool resumed = false;         // an earlier session was resumed
};

// What a transport reports, in the loop thread. Each report is one call per
// read or write event, never per byte.
class TransportOwner {
 public:
  // New bytes are at the end of the input Buffer.
  virtual void bytesReceived(Timestamp receiveTime) = 0;
  // The output Buffer is empty and nothing taken from it is still being
  // written.
  virtual void outputDrained() = 0;
  // The peer half-closed: a read found the end of the stream.
  virtual void peerClosed() = 0;
  // The socket hung up both ways (POLLHUP with nothing left to read).
  virtual void hungUp() = 0;
  // A read or write failed with err; `where` names it for the log. The
  // transport goes on as if nothing happened: the owner closes.
  virtual void ioFailed(const char* where, int err) = 0;
  // Only from a transport whose needsHandshake() is true (a layer such as
  // TLS): the handshake completed, the connection is up; or it failed
  // (`reason` says why, for the log and the application) and the owner
  // closes. Exactly one of the two, once; except that a TLS 1.3 client
  // refused by the server after its side was done (the server checks the
  // client's certificate last) hears handshakeFailed() after
  // handshakeDone(), before any data.
  virtual void handshakeDone() = 0;
  virtual void handshakeFailed(const std::string& reason) = 0;

 protected:
  ~TransportOwner() = default;
};

class Transport {
 public:
  // What a transport works with. All of it belongs to the owner and
  // outlives the transport.
  struct Parts {
    EventLoop* loop;        // the loop whose thread drives the socket
    int fd;                 // the connected socket (not owned)
    const std::string* name;  // the owner's name, for log lines
    TransportOwner* owner;  // where reports go
    Buffer* input;          // received bytes are appended here
    Buffer* output;         // sendOutput() sends from here
  };

  virtual ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Once, when the connection is established, before anything else. While
  // the transport handles an event or has a request in flight it holds
  // `owner`, so a report that drops the owner's last other reference
  // cannot free it (and the transport) under its own feet.
  virtual void attach(const std::shared_ptr<void>& owner) = 0;

  // Reading on and off.
  virtual void startReading() = 0;
  virtual void stopReading() = 0;

  // With nothing queued and nothing being written: hands the head of `data`
  // to the socket now. Returns how many bytes it took (they are the
  // transport's from now on), or -errno (-EAGAIN: none for now). If
  // `source` is given, `data` is its readable bytes and the transport may
  // take its storage whole; the caller empties it anyway.
  virtual ssize_t write(std::string_view data, Buffer* source) = 0;
  // The output Buffer holds bytes: send them. outputDrained() follows once
  // it is empty and written.
  virtual void sendOutput() = 0;
  // Whether bytes the transport took are still being written.
  virtual bool writing() const = 0;
  // Our FIN, once nothing is queued or being written.
  virtual void shutdownWrite();
  // Stops all I/O at once and for good: nothing more is read, written or
  // reported; requests in flight are cancelled. Idempotent.
  virtual void close() = 0;
  // Last, after close(): leaves the loop.
  virtual void detach() {}

  // How many of the owner's shared_ptr references are the transport's own
  // (requests in flight), not users'. Any thread.
  virtual long ownerReferences() const { return 0; }

  // Whether the connection is up only once the transport reports
  // handshakeDone() (a layer such as TLS), instead of at attach().
  virtual bool needsHandshake() const { return false; }
  // What a security layer negotiated, once handshakeDone() was reported;
  // nullptr on plain TCP. Loop thread.
  virtual const SecurityInfo* security() const { return nullptr; }

 protected:
  explicit Transport(const Parts& parts);

  EventLoop* const loop_;
  const int fd_;
  const std::string& name_;
  TransportOwner* const owner_;
  Buffer* const input_;
  Buffer* const output_;
};

// TransportLayer: a protocol between the socket and the connection's
// buffers, such as TLS (muon::tls's TlsContext). Set on a TcpServer or
// TcpClient (setTransportLayer), it makes the transport of each of their
// connections: its own, wrapped around the engine's. newTransport() is
// called in whichever thread makes the connection, so an implementation is
// thread-safe.
class TransportLayer {
 public:
  virtual ~TransportLayer();
  // The connection's transport. `parts` are the connection's (its buffers
  // hold plaintext); the layer makes the engine's transport below its own
  // with parts.loop's poller.
  virtual std::unique_ptr<Transport> newTransport(const Transport::Parts& parts) = 0;
};

}  // namespace net
}  // namespace muon
