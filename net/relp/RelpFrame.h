// RELP framing (rsyslog's Reliable Event Logging Protocol): the limits of a
// frame and its encoder. A frame is
//   TXNR SP COMMAND SP DATALEN [SP DATA] LF
// TXNR: 1 to 9 digits, 1..999999999 for commands and their responses, 0 for
// the server's hints (serverclose); COMMAND: 1 to 32 letters; DATALEN: 1 to 9
// digits, the number of DATA bytes; when it is 0 there is neither the SP nor
// DATA. Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace muon {
namespace net {
namespace relp {

constexpr uint32_t kMaxTxnr = 999999999;      // then the sequence starts again at 1
constexpr size_t kMaxNumberDigits = 9;        // TXNR and DATALEN
constexpr size_t kMaxCommandLength = 32;
constexpr size_t kMaxDataLength = 999999999;  // what 9 digits can say

// The transaction number after `txnr` (999999999 is followed by 1; 0 is the
// hints' number and never follows anything).
inline uint32_t nextTxnr(uint32_t txnr) { return txnr >= kMaxTxnr ? 1 : txnr + 1; }

// How many steps of nextTxnr() lead from `from` to `to` (both 1..kMaxTxnr):
// the place of a response's txnr in a window that starts at `from`.
inline uint32_t txnrDistance(uint32_t from, uint32_t to) {
  return to >= from ? to - from : kMaxTxnr - from + to;
}

// Appends one frame to *out. The caller keeps to the limits above (txnr <=
// kMaxTxnr, command 1-32 letters, data.size() <= kMaxDataLength); they are
// asserted.
void appendFrame(std::string* out, uint32_t txnr, std::string_view command, std::string_view data);

inline std::string encodeFrame(uint32_t txnr, std::string_view command, std::string_view data) {
  std::string out;
  appendFrame(&out, txnr, command, data);
  return out;
}

}  // namespace relp
}  // namespace net
}  // namespace muon
