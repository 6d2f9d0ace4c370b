#include "muon/net/internal/TlsTransport.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "muon/base/Logging.h"
#include "muon/net/EventLoop.h"
#include "muon/net/internal/LoopBuffer.h"
#include "muon/net/internal/Poller.h"
#include "muon/net/TlsContext.h"

namespace muon {
namespace net {

namespace {

// Plaintext encrypted per turn: several records (16 KiB each) at once, so
// one write to the socket carries them; more only once the socket took
// them, so what waits stays plaintext in the output Buffer.
constexpr size_t kEncryptBatch = 256 * 1024;
// Room made in the input Buffer before each SSL_read: one whole record.
constexpr size_t kRecordBytes = 16 * 1024;

// Decrypted bytes go here while the connection's input Buffer is empty
// (LoopBuffer.h): an idle connection holds no record-sized buffer.
thread_local LoopBuffer t_plaintext;

// The BIO between OpenSSL and the Cipher buffers. A read takes from
// cipher.in and asks to be retried when it is empty; a write appends to
// cipher.out and always succeeds (the socket's pace is handled above it).
int bioWrite(BIO* bio, const char* data, int len) {
  BIO_clear_retry_flags(bio);
  auto* cipher = static_cast<TlsTransport::Cipher*>(BIO_get_data(bio));
  cipher->out.append(data, static_cast<size_t>(len));
  return len;
}

int bioRead(BIO* bio, char* out, int len) {
  BIO_clear_retry_flags(bio);
  auto* cipher = static_cast<TlsTransport::Cipher*>(BIO_get_data(bio));
  const size_t n = std::min(cipher->in.readableBytes(), static_cast<size_t>(len));
  if (n == 0) {
    BIO_set_retry_read(bio);
    return -1;
  }
  std::memcpy(out, cipher->in.peek(), n);
  cipher->in.retrieve(n);
  return static_cast<int>(n);
}

long bioCtrl(BIO* bio, int cmd, long, void*) {
  auto* cipher = static_cast<TlsTransport::Cipher*>(BIO_get_data(bio));
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_PENDING:
      return static_cast<long>(cipher->in.readableBytes());
    case BIO_CTRL_WPENDING:
      return static_cast<long>(cipher->out.readableBytes());
    default:
      return 0;
  }
}

int bioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

int bioDestroy(BIO*) { return 1; }

const BIO_METHOD* bufferBioMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "muon buffers");
    BIO_meth_set_write(m, bioWrite);
    BIO_meth_set_read(m, bioRead);
    BIO_meth_set_ctrl(m, bioCtrl);
    BIO_meth_set_create(m, bioCreate);
    BIO_meth_set_destroy(m, bioDestroy);
    return m;
  }();
  return method;
}

}  // namespace

TlsTransport::TlsTransport(const Parts& parts, std::shared_ptr<const TlsContext> context, SSL* ssl)
    : Transport(parts),
      context_(std::move(context)),
      ssl_(ssl),
      inner_(parts.loop->poller()->newTransport(
          {parts.loop, parts.fd, parts.name, this, &cipher_.in, &cipher_.out})),
      state_(kHandshaking),
      appReading_(false),
      appWriting_(false),
      drainQueued_(false),
      shutdownPending_(false),
      peerClosedReported_(false),
      dataReceived_(false) {
  BIO* bio = BIO_new(bufferBioMethod());
  BIO_set_data(bio, &cipher_);
  SSL_set_bio(ssl_, bio, bio);  // one reference, SSL's from now on
}

TlsTransport::~TlsTransport() { SSL_free(ssl_); }

void TlsTransport::attach(const std::shared_ptr<void>& owner) {
  ownerRef_ = owner;
  inner_->attach(owner);
  // The handshake reads whatever the application wants; a timer bounds it.
  inner_->startReading();
  std::weak_ptr<void> weak = owner;
  handshakeTimer_ = loop_->runAfter(context_->handshakeTimeoutSeconds(), [this, weak] {
    // The owner alive means this transport is too.
    const std::shared_ptr<void> alive = weak.lock();
    if (!alive) return;
    if (state_ == kHandshaking) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", context_->handshakeTimeoutSeconds());
      fail(std::string("the handshake did not complete within ") + seconds + " s");
    } else if (state_ == kFailing) {
      reportFailure();  // the peer does not take our alert: no more waiting
    }
  });
  if (!context_->isServer()) advanceHandshake();  // our ClientHello
}

void TlsTransport::startReading() {
  appReading_ = true;
  if (state_ == kEstablished) inner_->startReading();
}

void TlsTransport::stopReading() {
  appReading_ = false;
  if (state_ == kEstablished) inner_->stopReading();
}

bool TlsTransport::writing() const { return cipher_.out.readableBytes() > 0 || inner_->writing(); }

void TlsTransport::close() {
  if (state_ == kClosed) return;
  if (state_ == kHandshaking || state_ == kFailing) loop_->cancel(handshakeTimer_);
  state_ = kClosed;
  inner_->close();
}

// ---- the handshake ---------------------------------------------------------

void TlsTransport::advanceHandshake() {
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl_);
  const int sslError = rc == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, rc);
  // Our next flight, or the alert that tells the peer why we give up.
  const int err = flush();
  if (rc == 1) {
    if (err != 0) {
      fail(std::string("write: ") + strerror_tl(err));
    } else {
      established();
    }
  } else if (sslError == SSL_ERROR_WANT_READ) {
    if (err != 0) fail(std::string("write: ") + strerror_tl(err));
  } else {
    fail(failureReason(sslError));
  }
}

void TlsTransport::established() {
  loop_->cancel(handshakeTimer_);
  state_ = kEstablished;
  info_.protocol = SSL_get_version(ssl_);
  info_.cipher = SSL_get_cipher_name(ssl_);
  const unsigned char* alpn = nullptr;
  unsigned alpnLen = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &alpnLen);
  if (alpn != nullptr) info_.alpn.assign(reinterpret_cast<const char*>(alpn), alpnLen);
  if (X509* peer = SSL_get0_peer_certificate(ssl_)) {
    char subject[256];
    X509_NAME_oneline(X509_get_subject_name(peer), subject, sizeof subject);
    info_.peerCertificate = subject;
  }
  info_.resumed = SSL_session_reused(ssl_) == 1;
  if (!appReading_) inner_->stopReading();
  owner_->handshakeDone();
}

void TlsTransport::fail(const std::string& reason) {
  if (state_ != kHandshaking) return;
  state_ = kFailing;
  failure_ = reason;
  // The alert telling the peer why goes out before the owner closes (on
  // io_uring the close would cancel its send); the timer still bounds it.
  if (!writing()) reportFailure();
}

void TlsTransport::reportFailure() {
  if (state_ != kFailing) return;
  loop_->cancel(handshakeTimer_);
  state_ = kFailed;
  owner_->handshakeFailed(failure_);
}

std::string TlsTransport::failureReason(int sslError) {
  std::string reason;
  const unsigned long e = ERR_peek_error();
  if (e != 0) {
    const char* text = ERR_reason_error_string(e);
    reason = text != nullptr ? text : "error " + std::to_string(ERR_GET_REASON(e));
    if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
      reason += ": ";
      reason += X509_verify_cert_error_string(SSL_get_verify_result(ssl_));
    }
  } else if (sslError == SSL_ERROR_SYSCALL) {
    reason = "the peer closed the connection";
  } else {
    reason = "TLS error " + std::to_string(sslError);
  }
  ERR_clear_error();
  return reason;
}

// ---- what the engine's transport reports -----------------------------------

void TlsTransport::bytesReceived(Timestamp receiveTime) {
  if (state_ == kHandshaking) {
    advanceHandshake();
    // Application data may follow the handshake in the same read.
  }
  if (state_ == kEstablished) decrypt(receiveTime);
}

void TlsTransport::decrypt(Timestamp receiveTime) {
  // Nothing OpenSSL has not seen yet (the handshake may have taken it all).
  if (cipher_.in.readableBytes() == 0 && SSL_has_pending(ssl_) == 0) return;
  bool received = false;
  int sslError = SSL_ERROR_NONE;
  int err = 0;
  {
    // Plaintext into the loop's buffer while the connection holds none.
    BufferLoan loan(input_, &t_plaintext);
    for (;;) {
      input_->ensureWritableBytes(kRecordBytes);
      const int room =
          static_cast<int>(std::min(input_->writableBytes(), static_cast<size_t>(INT_MAX)));
      ERR_clear_error();
      const int n = SSL_read(ssl_, input_->beginWrite(), room);
      if (n > 0) {
        input_->hasWritten(static_cast<size_t>(n));
        received = true;
        continue;
      }
      sslError = SSL_get_error(ssl_, n);
      break;
    }
    // What reading made OpenSSL say back (a key update, an alert).
    err = flush();
    if (received) {
      dataReceived_ = true;
      owner_->bytesReceived(receiveTime);
    }
  }
  if (state_ != kEstablished) return;  // closed by the callback
  if (sslError == SSL_ERROR_WANT_READ) {
    if (err != 0) owner_->ioFailed("write", err);
  } else if (sslError == SSL_ERROR_ZERO_RETURN) {
    // The peer's close_notify: its end of the stream, as a FIN on plain TCP.
    if (!peerClosedReported_) {
      peerClosedReported_ = true;
      owner_->peerClosed();
    }
  } else if (refusedAfterHandshake()) {
    // The server's verdict on our certificate: the handshake's failure in
    // all but timing, reported as one (the owner closes).
    state_ = kFailed;
    owner_->handshakeFailed(failureReason(sslError));
  } else {
    // One line, the connection's, naming OpenSSL's reason.
    recordFailure_ = "TLS record (" + failureReason(sslError) + ")";
    owner_->ioFailed(recordFailure_.c_str(), EPROTO);
  }
}

bool TlsTransport::leftToReading(int err) {
  // A TLS 1.3 server that refuses our certificate sends its alert and
  // closes, possibly before our first write (which then fails): the alert
  // still waits in the socket to be read, and reading reports it, or the
  // close if there is none. What we wrote is dropped with the connection.
  if ((err != EPIPE && err != ECONNRESET) || !appReading_ || context_->isServer() ||
      dataReceived_ || SSL_version(ssl_) != TLS1_3_VERSION) {
    return false;
  }
  cipher_.out.retrieveAll();
  return true;
}

bool TlsTransport::refusedAfterHandshake() const {
  // With TLS 1.3 a client's handshake is done once it has sent its
  // Finished; the server checks the client's certificate (or its absence)
  // after that, and a refusal arrives as a fatal alert before anything
  // else. An alert received shows in OpenSSL's queue as a reason code past
  // SSL_AD_REASON_OFFSET ("tlsv13 alert certificate required").
  if (context_->isServer() || dataReceived_ || SSL_version(ssl_) != TLS1_3_VERSION) return false;
  const unsigned long e = ERR_peek_error();
  return ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) >= SSL_AD_REASON_OFFSET;
}

void TlsTransport::outputDrained() {
  if (state_ == kFailing) reportFailure();
  if (state_ != kEstablished) return;
  pumpOutput();
  if (state_ == kClosed || writing()) return;
  if (shutdownPending_) {
    shutdownPending_ = false;
    inner_->shutdownWrite();
  }
  if (appWriting_ && output_->readableBytes() == 0) {
    appWriting_ = false;
    owner_->outputDrained();
  }
}

void TlsTransport::peerClosed() {
  if (state_ == kFailing) {
    reportFailure();
  } else if (state_ == kHandshaking) {
    fail("the peer closed the connection during the handshake");
  } else if (state_ == kEstablished && !peerClosedReported_) {
    // A FIN without close_notify: the stream may have been cut short, which
    // only the application's own framing can tell.
    LOG_DEBUG << "TlsTransport[" << name_ << "] end of stream without close_notify";
    peerClosedReported_ = true;
    owner_->peerClosed();
  }
}

void TlsTransport::hungUp() {
  if (state_ == kFailing) {
    reportFailure();
  } else if (state_ == kHandshaking) {
    fail("the peer hung up during the handshake");
  } else if (state_ == kEstablished) {
    owner_->hungUp();
  }
}

void TlsTransport::ioFailed(const char* where, int err) {
  if (state_ == kFailing) {
    reportFailure();
  } else if (state_ == kHandshaking) {
    fail(std::string(where) + ": " + strerror_tl(err));
  } else if (state_ == kEstablished) {
    owner_->ioFailed(where, err);
  }
}

// ---- sending ---------------------------------------------------------------

ssize_t TlsTransport::encrypt(std::string_view data) {
  const size_t n = std::min(data.size(), kEncryptBatch);
  ERR_clear_error();
  // The BIO takes every byte, so SSL_write takes all n or fails.
  const int rc = SSL_write(ssl_, data.data(), static_cast<int>(n));
  if (rc <= 0) {
    LOG_WARN << "TlsTransport[" << name_ << "] " << failureReason(SSL_get_error(ssl_, rc));
    return -1;
  }
  return static_cast<ssize_t>(n);
}

int TlsTransport::flush() {
  if (cipher_.out.readableBytes() == 0 || inner_->writing()) return 0;
  const size_t size = cipher_.out.readableBytes();
  const ssize_t n = inner_->write(cipher_.out.toStringView(), &cipher_.out);
  if (n < 0) {
    if (n != -EAGAIN) return static_cast<int>(-n);
    inner_->sendOutput();
    return 0;
  }
  if (static_cast<size_t>(n) == size) {
    cipher_.out.retrieveAll();  // or what the transport left in its place
  } else {
    cipher_.out.retrieve(static_cast<size_t>(n));
    inner_->sendOutput();
  }
  return 0;
}

ssize_t TlsTransport::write(std::string_view data, Buffer*) {
  if (state_ != kEstablished) return -EPIPE;
  const ssize_t n = encrypt(data);
  if (n < 0) return -EPROTO;
  const int err = flush();
  if (err != 0 && !leftToReading(err)) return -err;
  // Still being written: the connection hears outputDrained() later.
  appWriting_ = writing();
  return n;
}

void TlsTransport::sendOutput() {
  if (state_ != kEstablished) return;
  appWriting_ = true;
  pumpOutput();
  if (state_ != kEstablished || writing() || drainQueued_) return;
  // All of it went out at once: the connection hears so after this call,
  // not inside its send().
  drainQueued_ = true;
  loop_->queueInLoop([this, weak = ownerRef_] {
    const std::shared_ptr<void> alive = weak.lock();
    if (!alive) return;
    drainQueued_ = false;
    if (state_ == kEstablished && !writing()) outputDrained();
  });
}

void TlsTransport::pumpOutput() {
  while (state_ == kEstablished && output_->readableBytes() > 0 && !writing()) {
    const ssize_t n = encrypt(output_->toStringView());
    if (n < 0) {
      owner_->ioFailed("TLS encrypt", EPROTO);
      return;
    }
    output_->retrieve(static_cast<size_t>(n));
    const int err = flush();
    if (err != 0 && !leftToReading(err)) {
      owner_->ioFailed("write", err);
      return;
    }
  }
}

void TlsTransport::shutdownWrite() {
  if (state_ != kEstablished) {
    inner_->shutdownWrite();
    return;
  }
  ERR_clear_error();
  SSL_shutdown(ssl_);  // our close_notify, into cipher_.out
  const int err = flush();
  if (err != 0) {
    owner_->ioFailed("write", err);
  } else if (writing()) {
    shutdownPending_ = true;  // the FIN once the alert is out
  } else {
    inner_->shutdownWrite();
  }
}

}  // namespace net
}  // namespace muon
