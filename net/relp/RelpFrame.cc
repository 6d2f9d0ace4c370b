#include "muon/net/relp/RelpFrame.h"

#include <cassert>

namespace muon {
namespace net {
namespace relp {

namespace {

[[maybe_unused]] bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

void appendNumber(std::string* out, size_t n) {
  char digits[20];
  size_t len = 0;
  do {
    digits[len++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  while (len > 0) out->push_back(digits[--len]);
}

}  // namespace

void appendFrame(std::string* out, uint32_t txnr, std::string_view command, std::string_view data) {
  assert(txnr <= kMaxTxnr);
  assert(!command.empty() && command.size() <= kMaxCommandLength);
  for (char c : command) {
    assert(isLetter(c));
    (void)c;
  }
  assert(data.size() <= kMaxDataLength);
  out->reserve(out->size() + command.size() + data.size() + 2 * kMaxNumberDigits + 4);
  appendNumber(out, txnr);
  out->push_back(' ');
  out->append(command.data(), command.size());
  out->push_back(' ');
  appendNumber(out, data.size());
  if (!data.empty()) {
    out->push_back(' ');
    out->append(data.data(), data.size());
  }
  out->push_back('\n');
}

}  // namespace relp
}  // namespace net
}  // namespace muon
