// Connector: makes one TCP connection, with retries. Internal header; use
// TcpClient.
//
// Owned by shared_ptr (its timers and queued calls hold it). start(),
// stop() are safe from any thread; restart() and the rest belong to the
// loop thread. A failed attempt is retried after a delay that starts at
// the initial delay and doubles up to the cap (500 ms and 30 s by default);
// an attempt the server does not answer fails after the connect timeout
// (30 s by default) with ETIMEDOUT.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "muon/net/Callbacks.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TimerId.h"

namespace muon {
namespace net {

class Channel;
class EventLoop;

class Connector : public std::enable_shared_from_this<Connector> {
 public:
  using NewConnectionCallback = std::function<void(int sockfd)>;

  static constexpr int kDefaultInitRetryDelayMs = 500;
  static constexpr int kDefaultMaxRetryDelayMs = 30 * 1000;
  // Shorter than the kernel's own limit (tcp_syn_retries: about two minutes),
  // long enough for a far server on a lossy path.
  static constexpr int kDefaultConnectTimeoutMs = 30 * 1000;

  Connector(EventLoop* loop, const InetAddress& serverAddr);
  ~Connector();
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;

  // Gets the connected fd (ownership passes). Set before start().
  void setNewConnectionCallback(NewConnectionCallback cb) { newConnectionCallback_ = std::move(cb); }
  // Called for each failed attempt with its errno, queued to the loop
  // thread after the attempt is closed and the next one scheduled (so it may
  // call start() or stop()); not once stop() was called. Before start().
  void setConnectFailureCallback(ConnectFailureCallback cb) { connectFailureCallback_ = std::move(cb); }
  // Before start().
  void setRetryDelayMs(int initialMs, int maxMs);
  // How long an attempt may wait for the server's answer; 0: as long as the
  // kernel does. Before start().
  void setConnectTimeoutMs(int ms);

  // Any thread. Connects unless an attempt is in flight or the connection
  // handed over is still open; cancels a retry still scheduled.
  void start();
  void restart();  // loop thread: start over with the initial delay
  // Loop thread: the connection handed over has closed, so start() may
  // connect again.
  void connectionClosed();
  // Any thread. Safe while an attempt is in flight, while a retry is
  // scheduled, and from a callback handling another fd's event in the same
  // loop iteration in which this connector's socket became writable.
  void stop();

  const InetAddress& serverAddress() const { return serverAddr_; }
  int currentRetryDelayMs() const { return retryDelayMs_; }

 private:
  enum States { kDisconnected, kConnecting, kConnected };

  void setState(States s) { state_.store(s, std::memory_order_release); }
  void startInLoop();
  void stopInLoop();
  void connect();
  void connecting(int sockfd);
  void handleWrite();
  void handleError();
  void handleTimeout();
  void attemptFailed(int sockfd, int err, bool tryAgain);
  void retry(int sockfd);
  int removeAndResetChannel();

  EventLoop* const loop_;
  const InetAddress serverAddr_;
  std::atomic<bool> connect_;
  std::atomic<States> state_;
  std::unique_ptr<Channel> channel_;
  NewConnectionCallback newConnectionCallback_;
  ConnectFailureCallback connectFailureCallback_;
  int initRetryDelayMs_;
  int maxRetryDelayMs_;
  int retryDelayMs_;
  int connectTimeoutMs_;
  TimerId retryTimer_;
  TimerId connectTimer_;  // the attempt in flight's deadline
};

}  // namespace net
}  // namespace muon
