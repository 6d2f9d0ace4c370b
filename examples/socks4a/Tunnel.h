// Tunnel: relays bytes both ways between a client's connection to the proxy
// (downstream) and the proxy's connection to the destination (upstream),
// for socks4a_server (the book's §7.13).
//
// Flow control: when one side's output buffer passes the high-water mark,
// the tunnel stops reading from the other side, and reads again once that
// output has been written out. So a fast sender and a slow receiver cost
// the proxy about one high-water mark per direction, not the whole stream.
//
// Closing: when either side goes away, the other is half-closed once
// everything queued for it has been written. When the client's side goes,
// the tunnel logs the largest each output buffer grew ("peak output buffer
// to client N, to destination M bytes"); the tests read that line, and the
// one (flushed at once) each time reading is paused.
//
// Lives in shared_ptr, held by the context of each of its two connections
// until that connection is down. Everything runs in the downstream
// connection's loop thread (the upstream TcpClient uses the same loop).
#pragma once

#include <memory>
#include <string>

#include "muon/net/Callbacks.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpClient.h"
#include "muon/net/TimerId.h"

namespace socks4a {

class Tunnel : public std::enable_shared_from_this<Tunnel> {
 public:
  // onConnected(true) runs once upstream is connected, onConnected(false) if
  // it is not within connectTimeoutSeconds; neither after downstream is down.
  using ConnectedCallback = std::function<void(bool)>;

  Tunnel(const muon::net::TcpConnectionPtr& downstream, const muon::net::InetAddress& destination,
         size_t highWaterMark);
  ~Tunnel();
  Tunnel(const Tunnel&) = delete;
  Tunnel& operator=(const Tunnel&) = delete;

  void connect(double connectTimeoutSeconds, ConnectedCallback onConnected);

  // Calls for the downstream connection, from the server's callbacks.
  void onDownstreamMessage(muon::net::Buffer* buf);
  void onDownstreamWriteComplete();
  void onDownstreamDown();

 private:
  void onUpstreamConnection(const muon::net::TcpConnectionPtr& upstream);
  void onUpstreamUp(const muon::net::TcpConnectionPtr& upstream);
  // The other side is gone: half-close conn once its output is written,
  // and read (and drop) until its peer closes too.
  static void closeAfterOutput(const muon::net::TcpConnectionPtr& conn);
  // Stops reading from `source` because the output to `slowSide` passed
  // the high-water mark (at `size` bytes); logs it.
  void hold(const muon::net::TcpConnectionPtr& source, const char* slowSide, size_t size);
  // Sends buf to conn and updates *peak.
  static void relay(const muon::net::TcpConnectionPtr& conn, muon::net::Buffer* buf, size_t* peak);

  muon::net::TcpConnectionPtr downstream_;  // null once it is down
  muon::net::TcpConnectionPtr upstream_;    // null before it is up and once it is down
  muon::net::TcpClient client_;
  const size_t highWaterMark_;
  ConnectedCallback onConnected_;  // reset once called
  muon::net::TimerId connectTimer_;
  size_t peakToDownstream_ = 0;
  size_t peakToUpstream_ = 0;
};

}  // namespace socks4a
