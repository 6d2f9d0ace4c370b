#include "muon/base/internal/SpoolFormat.h"

#include <algorithm>

#include "muon/base/Logging.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/TimeZone.h"

namespace muon {
namespace spool {

namespace {

template <size_t kPathSize>
void storePosition(Position<kPathSize>* at, const FilePosition& pos) {
  at->device = pos.device;
  at->inode = pos.inode;
  at->size = pos.size;
  size_t n = std::min(pos.path.size(), kPathSize - 1);
  std::memcpy(at->path, pos.path.data(), n);
  at->path[n] = '\0';
}

bool allDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "<head>.<digits>" -> head and digits; false if `s` is not such, or head is empty.
bool splitNumber(const std::string& s, std::string* head, std::string* number) {
  size_t dot = s.rfind('.');
  if (dot == std::string::npos || dot == 0 || !allDigits(s.substr(dot + 1))) return false;
  *head = s.substr(0, dot);
  *number = s.substr(dot + 1);
  return true;
}

}  // namespace

void Lines::reserveMore(size_t n) {
  size_t capacity = std::max<size_t>(capacity_ * 2, 1 << 20);
  while (capacity < size_ + n) capacity *= 2;
  std::unique_ptr<char[]> bigger(new char[capacity]);
  if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
  data_ = std::move(bigger);
  capacity_ = capacity;
}

Lines::Lines(LineFormat format)
    : encoder_(detail::encoderFor(format)),
      zone_(format != LineFormat::kText ? std::make_unique<TimeZone>(Logger::timeZone()) : nullptr) {}

Lines::~Lines() = default;

void Lines::append(const char* p, size_t n) {
  if (capacity_ - size_ < n) reserveMore(n);
  std::memcpy(data_.get() + size_, p, n);
  size_ += n;
}

bool Lines::appendMessage(const char* p, size_t n, bool recorded) {
  if (!recorded) {
    append(p, n);
    return true;
  }
  bool cut = false;
  if (zone_ != nullptr) {
    encoded_.clear();
    if (!detail::appendRecordedLineAs(encoder_, p, n, *zone_, &encoded_, &cut)) return false;
    append(encoded_.data(), encoded_.size());
  } else {
    constexpr size_t kMaxLine = detail::RecordFormatter::kMaxLine;
    if (capacity_ - size_ < kMaxLine) reserveMore(kMaxLine);
    const size_t length = detail::formatRecordedLine(p, n, data_.get() + size_, &cut);
    size_ += length;
    if (length == 0) return false;
  }
  if (cut) detail::countTruncatedLine();
  return true;
}

uint64_t appendMessages(const char* buffer, size_t bufferSize, uint64_t messages, Lines* out) {
  uint64_t unreadable = 0;
  for (uint64_t n = 0; n < messages; ++n) {
    uint64_t word;
    std::memcpy(&word, buffer + bufferSize - (n + 1) * kEntrySize, sizeof word);
    const uint64_t length = word & kLengthMask;
    if (!out->appendMessage(buffer + (word >> 32), length, (word & kRecordedLine) != 0)) {
      ++unreadable;
    }
  }
  return unreadable;
}

void markWriting(Slot* s, const FilePosition& pos) {
  storePosition(&s->at, pos);
  __atomic_store_n(&s->state, uint64_t{kWriting}, __ATOMIC_RELEASE);
}

void beginReport(Header* h, const FilePosition& pos) {
  h->reportedBuffersBefore = h->reportedBuffers;
  h->reportedMessagesBefore = h->reportedMessages;
  storePosition(&h->reportAt, pos);
  __atomic_store_n(&h->reportState, uint64_t{kWriting}, __ATOMIC_RELEASE);
}

void endReport(Header* h, uint64_t buffers, uint64_t messages) {
  // Counted before the record is let go: in between, recovery cuts the
  // report out and goes by the counts from before it.
  __atomic_store_n(&h->reportedBuffers, h->reportedBuffers + buffers, __ATOMIC_RELAXED);
  __atomic_store_n(&h->reportedMessages, h->reportedMessages + messages, __ATOMIC_RELAXED);
  __atomic_store_n(&h->reportState, uint64_t{kFree}, __ATOMIC_RELEASE);
}

void abandonReport(Header* h) {
  __atomic_store_n(&h->reportedBuffers, h->reportedBuffersBefore, __ATOMIC_RELAXED);
  __atomic_store_n(&h->reportedMessages, h->reportedMessagesBefore, __ATOMIC_RELAXED);
  __atomic_store_n(&h->reportState, uint64_t{kFree}, __ATOMIC_RELEASE);
}

namespace {
const char kPublished[] = ".spool";
const char kUnpublished[] = ".spool.new";
}  // namespace

std::string fileName(const std::string& basename, long pid, int sequence) {
  std::string name = basename + "." + std::to_string(pid);
  if (sequence > 0) name += "." + std::to_string(sequence);
  return name + kPublished;
}

std::string unpublishedName(const std::string& basename, long pid) {
  return basename + "." + std::to_string(pid) + kUnpublished;
}

int parseName(const std::string& name, Name readings[2]) {
  const bool unpublished = endsWith(name, kUnpublished);
  if (!unpublished && !endsWith(name, kPublished)) return 0;
  const size_t suffix = unpublished ? sizeof kUnpublished - 1 : sizeof kPublished - 1;
  Name last;
  last.unpublished = unpublished;
  if (!splitNumber(name.substr(0, name.size() - suffix), &last.basename, &last.pid)) return 0;
  readings[0] = last;
  if (unpublished) return 1;  // a spool is made under its first name: no sequence
  Name first;
  if (!splitNumber(last.basename, &first.basename, &first.pid)) return 1;
  first.sequence = last.pid;
  readings[1] = first;
  return 2;
}

}  // namespace spool
}  // namespace muon
