// LengthHeaderCodec: the chat protocol of the book's §7.3. Each message is
// a 4-byte big-endian length followed by that many bytes.
//
// onMessage() is a TcpConnection message callback: it cuts the input into
// whole messages, hands each to the callback and leaves a partial one in the
// buffer for the next read. A length outside [0, kMaxMessageLength] means
// the peer does not speak the protocol: the connection is closed.
//
// Stateless apart from the callback, so one codec serves every connection
// and every thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "muon/base/Logging.h"
#include "muon/base/Timestamp.h"
#include "muon/net/Buffer.h"
#include "muon/net/TcpConnection.h"

namespace chat {

class LengthHeaderCodec {
 public:
  using StringMessageCallback =
      std::function<void(const muon::net::TcpConnectionPtr&, const std::string&, muon::Timestamp)>;

  static constexpr int32_t kMaxMessageLength = 64 * 1024;
  static constexpr size_t kHeaderLength = sizeof(int32_t);

  explicit LengthHeaderCodec(StringMessageCallback cb) : messageCallback_(std::move(cb)) {}

  // What cut() found at the front of a buffer.
  enum class Cut { kMessage, kIncomplete, kBadLength };

  // Takes the next whole message off the front of buf into *message; on a
  // bad length header, *badLength is it and nothing is taken. Pure, so any
  // bytes can be fed to it (tests/fuzz/ChatCodec_fuzz).
  static Cut cut(muon::net::Buffer* buf, std::string* message, int32_t* badLength) {
    if (buf->readableBytes() < kHeaderLength) return Cut::kIncomplete;
    const int32_t len = buf->peekInt32();
    if (len < 0 || len > kMaxMessageLength) {
      *badLength = len;
      return Cut::kBadLength;
    }
    const size_t total = kHeaderLength + static_cast<size_t>(len);
    if (buf->readableBytes() < total) return Cut::kIncomplete;  // the rest has not arrived
    buf->retrieve(kHeaderLength);
    *message = buf->retrieveAsString(static_cast<size_t>(len));
    return Cut::kMessage;
  }

  void onMessage(const muon::net::TcpConnectionPtr& conn, muon::net::Buffer* buf,
                 muon::Timestamp receiveTime) const {
    std::string message;
    int32_t badLength = 0;
    for (;;) {
      Cut c = cut(buf, &message, &badLength);
      if (c == Cut::kIncomplete) return;
      if (c == Cut::kBadLength) {
        LOG_ERROR << "chat: invalid length " << badLength << " from " << conn->peerAddress().toIpPort();
        buf->retrieveAll();
        conn->forceClose();
        return;
      }
      messageCallback_(conn, message, receiveTime);
    }
  }

  // The framed message; safe from any thread (TcpConnection::send is).
  static void send(const muon::net::TcpConnectionPtr& conn, std::string_view message) {
    muon::net::Buffer buf;
    buf.append(message);
    buf.prependInt32(static_cast<int32_t>(message.size()));
    conn->send(&buf);
  }

 private:
  const StringMessageCallback messageCallback_;
};

}  // namespace chat
