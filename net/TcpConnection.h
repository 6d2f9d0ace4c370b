// TcpConnection: one established TCP connection, client or server side.
//
// Always owned by a shared_ptr (TcpConnectionPtr): the TcpServer or
// TcpClient that made it holds one, user code may hold more, and the
// connection lives until the last one is dropped. It belongs to one loop
// thread (getLoop()); all callbacks run there.
//
// Safe from any thread: send(), shutdown(), forceClose(),
// forceCloseWithDelay(), setTcpNoDelay(), startRead(), stopRead(),
// connected(), disconnected(), name(), the addresses.
// Loop thread only: the setters of callbacks and context, inputBuffer(),
// outputBuffer(), connectEstablished(), connectDestroyed().
//
// With a transport layer (TLS, set on the TcpServer / TcpClient) the
// connection is up, and the connection callback runs, once the handshake
// is done; a failed handshake calls the handshake-failure callback instead
// and closes without either connection callback (a TLS 1.3 client refused
// by the server after its side was done is already up: the failure
// callback, then the down one; Callbacks.h).
//
// When the peer half-closes (read returns 0), the connection stops reading,
// writes out whatever is still queued, then closes, so no reply the peer
// asked for is dropped. See docs/net.md.
//
// The connection is the lifecycle, the callbacks and the buffers; its
// Transport, made by the loop's engine, moves the bytes between the buffers
// and the socket: by readiness (epoll, poll) or by completions (io_uring,
// where each request in flight holds a shared_ptr to the connection, and a
// block of the loop's receive ring may become inputBuffer()). See
// docs/net.md, "Transports".
#pragma once

#include <any>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "muon/base/Timestamp.h"
#include "muon/net/Buffer.h"
#include "muon/net/Callbacks.h"
#include "muon/net/InetAddress.h"
#include "muon/net/internal/Transport.h"

struct tcp_info;

namespace muon {
namespace net {

class EventLoop;
class Socket;

class TcpConnection : public std::enable_shared_from_this<TcpConnection>,
                      private TransportOwner {
 public:
  // Made by TcpServer / TcpClient from a connected socket, which it owns
  // from now on. Users do not construct connections.
  // `layer`, if given, makes the transport (TLS); else the loop's engine.
  TcpConnection(EventLoop* loop, std::string name, int sockfd, const InetAddress& localAddr,
                const InetAddress& peerAddr, TransportLayer* layer = nullptr);
  // Virtual only because the class has virtual members (the transport's
  // reports, private); it is not made to be derived from.
  virtual ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  EventLoop* getLoop() const { return loop_; }
  const std::string& name() const { return name_; }
  const InetAddress& localAddress() const { return localAddr_; }
  const InetAddress& peerAddress() const { return peerAddr_; }
  bool connected() const { return state_.load(std::memory_order_acquire) == kConnected; }
  bool disconnected() const { return state_.load(std::memory_order_acquire) == kDisconnected; }
  // What the security layer negotiated (protocol, cipher, ALPN, peer
  // certificate), or nullptr on plain TCP. Loop thread, once up.
  const SecurityInfo* security() const { return transport_->security(); }
  // Kernel TCP statistics; false on error.
  bool getTcpInfo(struct tcp_info* info) const;
  std::string getTcpInfoString() const;

  // Queues data for the peer. In the loop thread with nothing queued it is
  // written at once; what the socket does not take is kept and sent when it
  // becomes writable. From another thread the data is copied (or moved) and
  // sent in the loop thread; one thread's sends arrive in its order.
  // Returns true when the connection took the data (it was connected), false
  // when it dropped it: after shutdown(), forceClose() or the close. true does
  // not mean delivered: a close that comes later drops what is still queued.
  bool send(std::string_view message);
  bool send(const void* data, size_t len) {
    return send(std::string_view(static_cast<const char*>(data), len));
  }
  bool send(std::string&& message);
  // A string literal or other C string: without this overload send("ping")
  // would be ambiguous between string_view and string&&.
  bool send(const char* message) { return send(std::string_view(message)); }
  // Sends *buf's readable bytes and empties it, whether they were taken or
  // dropped (returns which, as above): a loop that sends until the buffer is
  // empty ends on a closed connection too.
  bool send(Buffer* buf);

  // Half-closes (SHUT_WR) once everything queued has been written; with TLS,
  // close_notify goes first. Does nothing before the connection is up.
  void shutdown();
  // Closes now, dropping queued output; the disconnect callback follows.
  void forceClose();
  void forceCloseWithDelay(double seconds);
  void setTcpNoDelay(bool on);
  // Acknowledges what was read at once (Socket::setTcpQuickAck): for a reader
  // that sends nothing back now, while a peer with Nagle's algorithm holds its
  // next small writes until this ACK. Loop thread.
  void setTcpQuickAck();

  // Stop / resume reading from the socket (the back-pressure switch, see
  // setHighWaterMarkCallback).
  void startRead();
  void stopRead();
  bool isReading() const { return reading_.load(std::memory_order_relaxed); }

  void setContext(std::any context) { context_ = std::move(context); }
  const std::any& getContext() const { return context_; }
  std::any* getMutableContext() { return &context_; }

  void setConnectionCallback(ConnectionCallback cb) { connectionCallback_ = std::move(cb); }
  void setMessageCallback(MessageCallback cb) { messageCallback_ = std::move(cb); }
  void setWriteCompleteCallback(WriteCompleteCallback cb) { writeCompleteCallback_ = std::move(cb); }
  void setHandshakeFailureCallback(HandshakeFailureCallback cb) {
    handshakeFailureCallback_ = std::move(cb);
  }
  // cb runs once each time the output buffer grows across `highWaterMark`
  // bytes (default 64 MiB). muon never drops data nor closes on its own: a
  // server that must bound memory stops reading (or producing) in cb and
  // resumes in the write-complete callback. See docs/net.md. cb runs after
  // the current callback: should the output drain before it runs, the
  // write-complete callback is called once more after cb, so that what cb
  // paused is resumed.
  void setHighWaterMarkCallback(HighWaterMarkCallback cb, size_t highWaterMark) {
    highWaterMarkCallback_ = std::move(cb);
    highWaterMark_ = highWaterMark;
  }
  // Input back-pressure against a peer that sends faster than the
  // application consumes: when, after the message callback, `limit` bytes or
  // more are left in the input buffer, reading stops and cb runs (once per
  // crossing). So the buffer holds at most `limit` plus one read. Reading
  // resumes when the application, having consumed, calls startRead().
  // 0 (the default) means no limit, as muduo: the buffer grows as the peer sends.
  void setInputLimitCallback(HighWaterMarkCallback cb, size_t limit) {
    inputLimitCallback_ = std::move(cb);
    inputLimit_ = limit;
  }
  // Internal: TcpServer / TcpClient use it to forget the connection.
  void setCloseCallback(CloseCallback cb) { closeCallback_ = std::move(cb); }

  Buffer* inputBuffer() { return &inputBuffer_; }
  // What is queued for the peer and not yet handed to the kernel (on
  // io_uring, the bytes of a send request in flight are the kernel's).
  // Read it freely; append only through send().
  Buffer* outputBuffer() { return &outputBuffer_; }

  // Internal: how many of the connection's shared_ptr owners are its
  // transport's requests in flight (io_uring), not users. Any thread.
  long engineReferences() const { return transport_->ownerReferences(); }

  // Internal, loop thread: called once when the connection is accepted /
  // connected, and once when its owner forgets it.
  void connectEstablished();
  void connectDestroyed();

 private:
  // The one lifecycle. Every connection goes kConnecting -> kConnected ->
  // ... -> kDisconnected (with a transport layer, kConnecting ->
  // kHandshaking -> kConnected, or kHandshaking -> kDisconnected when the
  // handshake fails); in between it may pass through
  //   kShutdownPending  shutdown() was asked: the queue drains, then our FIN
  //   kWriteClosed      our FIN is out; reading goes on until the peer's FIN
  //   kPeerClosed       the peer's FIN came: the queue drains, then we close
  //   kClosing          forceClose() was asked: the close is queued
  // connected() means kConnected, and only then does send() take data.
  // Other threads move it only kConnected -> kShutdownPending (shutdown)
  // and open -> kClosing (forceClose), by compare-and-swap; the rest is the
  // loop thread's.
  enum StateE {
    kConnecting,
    kHandshaking,
    kConnected,
    kShutdownPending,
    kWriteClosed,
    kPeerClosed,
    kClosing,
    kDisconnected,
  };
  // The send funnel: every send() overload comes here. makeOwned gives the
  // bytes as a std::string when they must travel to the loop thread.
  // `source`, if given, is the Buffer holding data, which the transport
  // may take whole instead of copying.
  template <typename MakeOwned>
  bool sendFrom(std::string_view data, MakeOwned makeOwned, Buffer* source = nullptr);
  void sendInLoop(std::string_view data, Buffer* source = nullptr);
  void shutdownInLoop();
  void forceCloseInLoop();
  void startReadInLoop();
  void stopReadInLoop();

  // What the transport reports (TransportOwner), loop thread.
  void bytesReceived(Timestamp receiveTime) override;
  void outputDrained() override;
  void peerClosed() override;
  void hungUp() override { handleClose(); }
  void ioFailed(const char* where, int err) override;
  void handshakeDone() override;
  void handshakeFailed(const std::string& reason) override;
  void handleClose();

  void setState(StateE s) { state_.store(s, std::memory_order_release); }
  static bool isOpen(StateE s) { return s != kConnecting && s != kDisconnected; }
  // Output not yet handed to the kernel: in the buffer, or a send in flight.
  bool outputQueued() const { return outputBuffer_.readableBytes() > 0 || transport_->writing(); }
  const char* stateToString() const;

  EventLoop* const loop_;
  const std::string name_;
  std::atomic<StateE> state_;
  // The application's wish (startRead / stopRead), not a stage of the
  // lifecycle: reading also stops when the peer's FIN has come.
  std::atomic<bool> reading_;
  // Input the transport reported after stopRead() (a receive that
  // completed before its cancellation, an event of the same iteration);
  // shown at startRead(). Loop thread.
  bool receivedWhileStopped_;
  // The connection callback has said "up" (so it must say "down"): not so
  // for a connection whose handshake never completed. Loop thread.
  bool announced_;
  std::unique_ptr<Socket> socket_;
  const std::unique_ptr<Transport> transport_;  // after socket_: gone before the fd closes
  const InetAddress localAddr_;
  const InetAddress peerAddr_;
  ConnectionCallback connectionCallback_;
  MessageCallback messageCallback_;
  WriteCompleteCallback writeCompleteCallback_;
  HandshakeFailureCallback handshakeFailureCallback_;
  HighWaterMarkCallback highWaterMarkCallback_;
  HighWaterMarkCallback inputLimitCallback_;
  size_t inputLimit_ = 0;
  CloseCallback closeCallback_;
  size_t highWaterMark_;
  Buffer inputBuffer_;
  Buffer outputBuffer_;
  std::any context_;
};

}  // namespace net
}  // namespace muon
