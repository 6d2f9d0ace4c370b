// libFuzzer target for the crash-safe spool reader (muon::readSpool): the
// bytes a recovery reads were left by a process that died at any instant, or
// by anyone who can write the log directory. Whatever they hold, readSpool
// must not read outside them, and every line it returns must lie inside its
// buffer, before that buffer's index, in order.
//
// Inputs shorter than a spool are laid over a valid two-slot spool built
// here (so mutations of the header, the slot pages and the entries are
// reached at once); longer ones are taken as they are.
//
// Slot 0 also holds recorded lines (a head, recorded operands, a trailer):
// every recorded line readSpool returns must format. The same bytes are
// also taken as one recorded line: formatRecordedLine must stay in its
// output, and a line it makes starts with the head and ends in '\n'; its
// JSON line (appendRecordedLineAs) exists exactly then, and is one
// line that parses (nlohmann::json) as an object with a message.
//
// The same bytes, as a file name, go to spool::parseName, which recovery
// and muon-recover run on every name in a log directory: each reading it
// gives must spell the name again, with a non-empty basename and numbers
// made of digits.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "FuzzCheck.h"
#include "muon/base/LogStream.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/LogSpool.h"
#include "muon/base/internal/SpoolFormat.h"
#include "muon/base/SpoolRecovery.h"
#include "muon/base/TimeZone.h"

namespace {

constexpr size_t kSlots = 2;
constexpr size_t kBufferSize = 4096;

// A recorded line as a crash-safe statement leaves it (RecordFormatter.h).
std::string recordedLine(int n) {
  const std::string head = "20261127 01:00:00.000000Z  4242 INFO  ";
  const std::string trailer = " - file.cc:" + std::to_string(n) + "\n";
  muon::LogStream stream;
  stream.buffer().append(head.data(), head.size());
  stream.startRecording(nullptr, nullptr);
  stream << "n=" << n << ' ' << 2.5 * n << ' ' << static_cast<const void*>(nullptr) << '|'
         << std::string("tab\there");
  std::string line(muon::detail::kRecordedLineHeader, '\0');
  muon::detail::writeRecordedLineHeader(&line[0], head.size(), trailer.size());
  line.append(stream.buffer().data(), stream.buffer().length());
  return line + trailer;
}

void checkRecordedLine(const uint8_t* data, size_t size) {
  static char out[muon::detail::RecordFormatter::kMaxLine + 64];
  std::memset(out + muon::detail::RecordFormatter::kMaxLine, 0x5a, 64);
  const size_t n = muon::detail::formatRecordedLine(reinterpret_cast<const char*>(data), size, out);
  FUZZ_CHECK(n <= muon::detail::RecordFormatter::kMaxLine);
  for (size_t i = 0; i < 64; ++i) FUZZ_CHECK(out[muon::detail::RecordFormatter::kMaxLine + i] == 0x5a);
  std::string json;
  const bool made = muon::detail::appendRecordedLineAs(
      muon::detail::encoderFor(muon::LineFormat::kJson), reinterpret_cast<const char*>(data), size,
      muon::TimeZone(), &json);
  FUZZ_CHECK(made == (n > 0));
  if (n == 0) return;
  const size_t head = data[0];
  FUZZ_CHECK(out[n - 1] == '\n' && n >= head && std::memcmp(out, data + 2, head) == 0);
  FUZZ_CHECK(!json.empty() && json.back() == '\n' && json.find('\n') == json.size() - 1);
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  FUZZ_CHECK(!j.is_discarded() && j.is_object() && j.contains("message"));
}

std::vector<char> validSpool() {
  using namespace muon;
  std::vector<char> image(spool::buffersOffset(kSlots) + kSlots * kBufferSize, 0);
  spool::Header h{};
  std::memcpy(h.magic, spool::kMagic, sizeof h.magic);
  h.version = spool::kVersion;
  h.slotCount = kSlots;
  h.bufferSize = kBufferSize;
  h.key = 0x1234567890abcdefull;
  h.pid = 4242;
  std::memcpy(image.data(), &h, sizeof h);
  for (size_t slot = 0; slot < kSlots; ++slot) {
    spool::Slot s{};
    s.state = slot == 0 ? spool::kActive : spool::kWriting;
    s.generation = slot + 1;
    s.sequence = kSlots - slot;
    std::strcpy(s.at.path, "/nonexistent/log");
    std::memcpy(image.data() + spool::slotOffset(slot), &s, sizeof s);
    char* buffer = image.data() + spool::buffersOffset(kSlots) + slot * kBufferSize;
    uint64_t seal = spool::sealFor(h.key, s.generation);
    uint64_t offset = 0;
    for (uint64_t n = 0; n < 5; ++n) {
      std::string line = "line " + std::to_string(n) + " of slot " + std::to_string(slot) + "\n";
      uint64_t flags = 0;
      if (slot == 0 && n % 2 == 1) {
        line = recordedLine(static_cast<int>(n));
        flags = spool::kRecordedLine;
      }
      std::memcpy(buffer + offset, line.data(), line.size());
      spool::record(buffer, kBufferSize, seal, n, offset, line.size() | flags);
      offset += line.size();
    }
  }
  return image;
}

bool allDigits(const std::string& s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

void checkNameParser(const uint8_t* data, size_t size) {
  const std::string name(reinterpret_cast<const char*>(data), size < 256 ? size : 256);
  muon::spool::Name readings[2];
  const int n = muon::spool::parseName(name, readings);
  FUZZ_CHECK(n >= 0 && n <= 2);
  for (int i = 0; i < n; ++i) {
    const muon::spool::Name& r = readings[i];
    FUZZ_CHECK(!r.basename.empty() && !r.pid.empty() && allDigits(r.pid) && allDigits(r.sequence));
    std::string spelled = r.basename + "." + r.pid;
    if (!r.sequence.empty()) spelled += "." + r.sequence;
    spelled += r.unpublished ? ".spool.new" : ".spool";
    FUZZ_CHECK(spelled == name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  checkNameParser(data, size);
  checkRecordedLine(data, size);
  static const std::vector<char> base = validSpool();
  std::vector<char> image;
  if (size >= base.size()) {
    image.assign(data, data + size);
  } else {
    image = base;
    std::memcpy(image.data(), data, size);
  }
  muon::SpoolContents contents;
  std::string error;
  if (!muon::readSpool(image.data(), image.size(), &contents, &error)) {
    FUZZ_CHECK(!error.empty());
    return 0;
  }
  muon::spool::Header h;
  std::memcpy(&h, image.data(), sizeof h);
  uint64_t previousSequence = 0;
  for (const auto& b : contents.buffers) {
    FUZZ_CHECK(b.slot < h.slotCount);
    FUZZ_CHECK(b.sequence >= previousSequence);
    previousSequence = b.sequence;
    uint64_t end = 0;
    const char* buffer = image.data() + muon::spool::bufferOffset(h.slotCount, h.bufferSize, b.slot);
    for (const auto& r : b.lines) {
      FUZZ_CHECK(r.length > 0 && r.offset >= end);
      end = r.offset + r.length;
      FUZZ_CHECK(end + muon::spool::kEntrySize <= h.bufferSize);
      static char out[muon::detail::RecordFormatter::kMaxLine];
      if (r.recorded) FUZZ_CHECK(muon::detail::formatRecordedLine(buffer + r.offset, r.length, out) > 0);
    }
  }
  return 0;
}
