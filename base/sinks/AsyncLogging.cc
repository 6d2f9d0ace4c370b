#include "muon/base/AsyncLogging.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>

#include <sys/prctl.h>

#include "muon/base/internal/BufferStore.h"
#include "muon/base/LogSpool.h"
#include "muon/base/CurrentThread.h"
#include "muon/base/internal/LineEncoders.h"
#include "muon/base/internal/LineForwards.h"
#include "muon/base/internal/RecordFormatter.h"
#include "muon/base/internal/RecordQueues.h"
#include "muon/base/Timestamp.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/TscClock.h"

namespace muon {

namespace {
// The reserve word (see AsyncLogging.h): slot | messages | bytes.
constexpr int kSlotShift = 56;
constexpr int kMessagesShift = 36;
constexpr uint64_t kBytesMask = (uint64_t{1} << kMessagesShift) - 1;
constexpr uint64_t kMessagesMask = (uint64_t{1} << (kSlotShift - kMessagesShift)) - 1;
constexpr uint64_t kOneMessage = uint64_t{1} << kMessagesShift;
// A buffer's commit word: bytes in the low 40 bits, messages above them, so
// that one fetch_add records both.
constexpr int kCommitMessageShift = 40;
constexpr uint64_t kCommitBytesMask = (uint64_t{1} << kCommitMessageShift) - 1;

// The short constructor's options: the defaults but for these two.
AsyncLogging::Options withInterval(int flushInterval, AsyncLogging::OverflowPolicy policy) {
  AsyncLogging::Options options;
  options.flushInterval = flushInterval;
  options.policy = policy;
  return options;
}

// The backend hands LogFile whole buffers: each goes to the file at once,
// as one chunk (one record, when the file has stages), with no copy.
LogFile::Options unbuffered(LogFile::Options files) {
  files.buffered = false;
  return files;
}

uint64_t makeReserveWord(size_t slot) { return static_cast<uint64_t>(slot) << kSlotShift; }
uint64_t bytesOf(uint64_t word) { return word & kBytesMask; }
uint64_t messagesOf(uint64_t word) { return (word >> kMessagesShift) & kMessagesMask; }

// Commits are spread over kCommitStripes counters, each on a cache line of
// its own, and a thread always uses the same one: producers on different
// cores then contend for the reserve word only, not also for one commit
// word. The backend adds the stripes up.
constexpr size_t kCommitStripes = 8;
// This thread's stripe plus one (0: not chosen yet); threads take the
// stripes in turn.
thread_local size_t t_commitStripe = 0;
size_t commitStripe() {
  if (__builtin_expect(t_commitStripe == 0, 0)) {
    static std::atomic<size_t> next{0};
    t_commitStripe = next.fetch_add(1, std::memory_order_relaxed) % kCommitStripes + 1;
  }
  return t_commitStripe - 1;
}
}  // namespace

struct AsyncLogging::Buffer {
  explicit Buffer(size_t s) : slot(s) {}

  // Back to empty, before the buffer is published as current again.
  void reset() {
    for (Stripe& c : committed) c.value.store(0, std::memory_order_relaxed);
    holdsRecordedLines.store(false, std::memory_order_relaxed);
    validEnd.store(kBufferSize, std::memory_order_relaxed);
    finalReserved = 0;
  }

  // Spins until every reservation made in this buffer has been committed.
  // Writers hold no lock between reserving and committing, and copy at most
  // one line in between, so the wait is short.
  void waitForWriters() const {
    for (int spins = 0;
         (committedSum(std::memory_order_acquire) & kCommitBytesMask) != bytesOf(finalReserved);
         ++spins) {
      if (spins > 64) std::this_thread::yield();
    }
  }

  // Bytes of whole lines at the front of data (call after waitForWriters).
  size_t length(uint64_t entrySize) const {
    uint64_t bytes = bytesOf(finalReserved);
    return bytes + messagesOf(finalReserved) * entrySize <= kBufferSize
               ? bytes
               : validEnd.load(std::memory_order_relaxed);
  }
  uint64_t messages() const { return committedSum(std::memory_order_relaxed) >> kCommitMessageShift; }

  // Adds to this thread's stripe of the commit word: release, so that the
  // backend's acquire sum sees the bytes copied before it.
  void commit(uint64_t amount) {
    committed[commitStripe()].value.fetch_add(amount, std::memory_order_release);
  }
  // The commit word: [ messages : 24 | bytes : 40 ], the stripes added up
  // (no field overflows into the next: a buffer holds 4 MiB).
  uint64_t committedSum(std::memory_order order) const {
    uint64_t sum = 0;
    for (const Stripe& c : committed) sum += c.value.load(order);
    return sum;
  }

  const size_t slot;
  // Its order among the buffers that have been current, from 1 (set
  // before it is published): what RecordSink::writtenThrough() counts.
  uint64_t sequence = 0;
  char* data = nullptr;  // set before the buffer is first published
  uint64_t seal = 0;     // this generation's index seal (the store's activate())
  // The reserve word when this buffer stopped being current (set under
  // mutex_); once committed bytes reach its bytes, no writer is left.
  uint64_t finalReserved = 0;
  // Where the line that did not fit would have started: the end of data.
  std::atomic<size_t> validEnd{kBufferSize};
  // Some message is a recorded line (crash-safe mode): the buffer is
  // formatted when written. Set before the message's commit.
  std::atomic<bool> holdsRecordedLines{false};
  struct alignas(64) Stripe {
    std::atomic<uint64_t> value{0};
  };
  Stripe committed[kCommitStripes];
};

AsyncLogging::AsyncLogging(const std::string& basename, off_t rollSize, int flushInterval,
                           OverflowPolicy policy)
    : AsyncLogging(basename, rollSize, withInterval(flushInterval, policy)) {}

AsyncLogging::AsyncLogging(const std::string& basename, off_t rollSize, const Options& options)
    : flushInterval_(options.flushInterval > 0 ? options.flushInterval : 1),
      policy_(options.policy),
      afterWrite_(options.afterWrite),
      reserve_(0),
      // Crash-safe: the spool records where the log files are, for a
      // recovery that may work in another directory; and a later chdir must
      // not part the files from the spool.
      basename_(options.crashSafe ? absolutePath(basename) : basename),
      // Only the backend thread uses it, so no lock. checkEveryN = 1: each
      // append is a whole buffer, so check the day on every one.
      output_(basename_, rollSize, false, flushInterval_, 1, unbuffered(options.files)),
      encoder_(detail::encoderFor(options.files.format)),
      store_(openStore(options.crashSafe)),
      forwards_(std::make_shared<detail::LineForwards>()) {
  entrySize_ = store_->entrySize();
  // Deferred formatting needs no spool: a record only the dead process
  // could decode would not survive it.
  if (!store_->crashSafe()) {
    records_ = std::make_unique<RecordQueues>(
        static_cast<detail::RecordSink*>(this), options.threadQueueBytes,
        [this](const char* lines, size_t len) { output_.appendEncoded(lines, len); },
        options.files.format);
  }
  assert((entrySize_ == 0 || entrySize_ == spool::kEntrySize) &&
         "AsyncLogging: an index other than the spool's");
  std::lock_guard<std::mutex> lock(mutex_);
  Buffer* first = takeSpare();
  if (!first) throw std::bad_alloc();
  reserve_.store(makeReserveWord(first->slot), std::memory_order_release);
  queued_.reserve(kMaxBuffers);
  spares_.reserve(kMaxBuffers);
}

std::unique_ptr<BufferStore> AsyncLogging::openStore(bool crashSafe) {
  if (crashSafe) {
    // Nobody can append before the constructor returns: the recovered
    // lines come before any of ours.
    LogSpool::Opened opened = LogSpool::open(basename_, kMaxBuffers, kBufferSize, &output_);
    for (const RecoveryReport& r : opened.recovered) {
      linesRecovered_ += r.lines;
      if (!r.error.empty()) {
        std::fprintf(stderr, "muon::AsyncLogging: recovering '%s': %s\n", r.spool.c_str(),
                     r.error.c_str());
      }
    }
    if (opened.spool) return std::move(opened.spool);
    std::fprintf(stderr, "muon::AsyncLogging: %s; logging without crash safety\n",
                 opened.error.c_str());
  }
  return std::make_unique<MemoryStore>(kBufferSize);
}

AsyncLogging::~AsyncLogging() {
  stop();
  // Lines appended after stop(), or without start() at all, have no backend
  // to write them; they are written here, so that none is lost.
  writeLeftovers();
  for (Buffer* b : slots_) {
    if (!b) continue;
    store_->discard(b->slot);  // all written: the current one is empty
    release(b);
  }
  // store_ goes next: with every slot free, a spool removes its file.
}

void AsyncLogging::setWriteFunction(WriteFunction write) {
  std::lock_guard<std::mutex> lock(mutex_);
  assert(state_ == State::kIdle && "setWriteFunction must come before start()");
  output_.setWriteFunction(std::move(write));
}

std::string AsyncLogging::spoolPath() const { return store_->path(); }

namespace {

// What append() copies into a buffer: a text line.
struct TextLine {
  static constexpr uint64_t kFlags = 0;
  size_t size() const { return len; }
  void copyTo(char* p) const { std::memcpy(p, line, len); }
  const char* line;
  size_t len;
};

// What appendRecordedLine() copies (crash-safe mode): the lengths of its
// head and trailer, then the line (RecordFormatter.h).
struct RecordedLine {
  static constexpr uint64_t kFlags = spool::kRecordedLine;
  size_t size() const { return detail::kRecordedLineHeader + len; }
  void copyTo(char* p) const {
    detail::writeRecordedLineHeader(p, head, trailer);
    std::memcpy(p + detail::kRecordedLineHeader, line, len);
  }
  const char* line;
  size_t len;
  size_t head;
  size_t trailer;
};

}  // namespace

void AsyncLogging::append(const char* logline, size_t len) {
  if (len == 0) return;
  // The buffers and the queues hold lines in the file's format only, which
  // the backend writes as they are (LogFile::appendEncoded): a line in
  // another (text handed to a JSON AsyncLogging) is encoded here, by the
  // caller.
  const std::string_view chunk(logline, len);
  if (__builtin_expect(!detail::allEncodedLines(encoder_, chunk), 0)) {
    std::string encoded;
    const std::string_view lines = detail::encodeGivenLines(encoder_, chunk, &encoded);
    appendInOrder(lines.data(), lines.size());
    return;
  }
  appendInOrder(logline, len);
}

void AsyncLogging::appendInOrder(const char* logline, size_t len) {
  // A thread with a queue keeps its lines in order with its records: in
  // the queue, or in the shared buffers as its statements' lines are now
  // (RecordQueue.h, the shared mode).
  detail::RecordQueue* queue = records_ ? records_->existingQueueForThisThread() : nullptr;
  if (queue == nullptr) {
    appendToBuffer(logline, len);
  } else {
    queue->appendLine(logline, len, TscClock::readCounter());
  }
}

uint64_t AsyncLogging::appendShared(const char* line, size_t len) {
  return appendToBuffer(line, len);
}

bool AsyncLogging::sealShared(uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Buffer* current = slots_[reserve_.load(std::memory_order_relaxed) >> kSlotShift];
  if (current->sequence > sequence) return true;
  // Not at the bound: a seal must neither drop buffers (kDrop) nor take
  // one past kMaxBuffers (kBlock). The thread stays shared meanwhile.
  return queued_.size() + inFlight_ < kMaxPendingBuffers && retireCurrent();
}

uint64_t AsyncLogging::appendToBuffer(const char* logline, size_t len) {
  // One body, instantiated with the index and without, so that a store
  // without one (the plain mode) costs none of its arithmetic. A line
  // longer than a buffer holds is cut.
  if (entrySize_ == 0) return appendTo<false>(TextLine{logline, std::min(len, kBufferSize)});
  return appendTo<true>(TextLine{logline, std::min<size_t>(len, kBufferSize - spool::kEntrySize)});
}

void AsyncLogging::appendRecordedLine(const char* line, size_t len, size_t head, size_t trailer) {
  assert(entrySize_ != 0 && "recorded lines go to a spool");
  appendTo<true>(RecordedLine{line, len, head, trailer});
}

template <bool kIndexed, typename Message>
uint64_t AsyncLogging::appendTo(const Message& message) {
  // The index is the spool's (SpoolFormat.h), the one store that keeps one:
  // its entry size is a constant here (the constructor checked entrySize_).
  const uint64_t entrySize = kIndexed ? spool::kEntrySize : 0;
  const size_t len = message.size();
  for (;;) {
    // acquire: pairs with the release that published the buffer's slot.
    uint64_t word =
        reserve_.fetch_add(len + (kIndexed ? kOneMessage : 0), std::memory_order_acquire);
    Buffer* b = slots_[word >> kSlotShift];
    uint64_t offset = bytesOf(word);
    uint64_t n = kIndexed ? messagesOf(word) : 0;
    // The line from the front, message n's index entry (if any) from the back.
    if (__builtin_expect(offset + len + (n + 1) * entrySize <= kBufferSize, 1)) {
      message.copyTo(b->data + offset);
      if (kIndexed) spool::record(b->data, kBufferSize, b->seal, n, offset, len | Message::kFlags);
      if (Message::kFlags != 0 && !b->holdsRecordedLines.load(std::memory_order_relaxed)) {
        b->holdsRecordedLines.store(true, std::memory_order_relaxed);
      }
      const uint64_t sequence = b->sequence;
      b->commit(len + (uint64_t{1} << kCommitMessageShift));
      return sequence;
    }
    if (!appendSlow(b, word, len)) return 0;
  }
}

bool AsyncLogging::appendSlow(Buffer* full, uint64_t word, size_t len) {
  // The one writer whose reservation crosses the end marks where the data
  // ends (the reservations before it all fit, later ones start past it);
  // its bytes and those of every later failed reservation are committed as
  // empty, so the backend's count still adds up.
  uint64_t offset = bytesOf(word);
  if (offset + messagesOf(word) * entrySize_ <= kBufferSize) {
    full->validEnd.store(offset, std::memory_order_relaxed);
  }
  // After this commit `full` may be written out, dropped or even unmapped by
  // another thread: it must not be touched again.
  full->commit(len);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // kBlock: wait for room; someone else may retire the full buffer meanwhile.
    auto mustWait = [this] {
      return policy_ == kBlock && state_ == State::kRunning && currentIsFull() &&
             queued_.size() + inFlight_ >= kMaxPendingBuffers;
    };
    if (mustWait()) {
      ++producerWaits_;
      producerCond_.wait(lock, [&] { return !mustWait(); });
    }
    // Whoever comes first retires it; the others find a fresh buffer. With
    // no memory for a fresh one, this line is lost, and counted.
    if (currentIsFull() && !retireCurrent()) {
      countDropped(0, 1);
      return false;
    }
  }
  return true;
}

bool AsyncLogging::takesCrowdedRecords() const { return output_.format() == LineFormat::kJson; }

bool AsyncLogging::appendCrowded(detail::RecordQueue& queue, const CrowdedRecord& record) {
  if (!takesCrowdedRecords()) return false;
  detail::OperandLine line;
  line.second = record.second;
  line.micro = record.micro;
  line.level = record.level;
  line.tid = CurrentThread::tid();
  line.tidText = CurrentThread::tidString();
  line.where = &record.site->where;
  line.operands = record.operands;
  line.length = record.length;
  char json[detail::kMaxJsonOfOperands];
  const size_t n = detail::encodeJsonOfOperands(line, json);
  if (n == 0) return false;
  queue.appendLine(json, n, record.count);
  return true;
}

detail::RecordQueue* AsyncLogging::queueForThisThread() { return records_->queueForThisThread(); }

bool AsyncLogging::wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  wakeRequested_ = true;
  backendCond_.notify_one();
  return backendWaiting_;
}

bool AsyncLogging::waitForRoom(detail::RecordQueue& queue) {
  std::unique_lock<std::mutex> lock(mutex_);
  // As for lines: kBlock waits only for a running backend.
  if (policy_ == kDrop || state_ != State::kRunning) {
    countDropped(0, 1);
    return false;
  }
  ++producerWaits_;
  records_->addWaiter();
  wakeRequested_ = true;
  backendCond_.notify_one();
  producerCond_.wait(lock, [&] {
    return RecordQueues::hasRoom(queue) || state_ != State::kRunning;
  });
  records_->removeWaiter();
  return true;
}

size_t AsyncLogging::drainRecords(bool write) {
  const size_t formatted = drainInto([this] {
    std::lock_guard<std::mutex> lock(mutex_);
    producerCond_.notify_all();
  });
  if (write) records_->writeLines();
  linesWritten_.fetch_add(formatted, std::memory_order_relaxed);
  return formatted;
}

size_t AsyncLogging::drainInto(const std::function<void()>& roomMade) {
  if (!forwards_->any()) return records_->drain(roomMade);
  detail::LineForwards::Run run(*forwards_);
  return records_->drain(roomMade, forwards_.get());
}

AsyncLogging::Forward AsyncLogging::addForward(void* sink,
                                               void (*appendRecord)(void*, const LogRecord&),
                                               void (*flushSink)(void*), int minLevel) {
  const uint64_t id = forwards_->add(sink, appendRecord, flushSink, minLevel);
  return Forward(std::unique_ptr<Forward::Registration>(new Forward::Registration{forwards_, id}));
}

AsyncLogging::Forward::Registration::~Registration() { forwards->remove(id); }

bool AsyncLogging::currentIsFull() const {
  // A writer only gets here after its reservation crossed the end, so the
  // current buffer is full exactly when what is reserved in it is past the
  // end. (Comparing buffers instead would be fooled when the full one was
  // dropped and its slot, or the Buffer itself, came back as the new current one.)
  uint64_t word = reserve_.load(std::memory_order_relaxed);
  return bytesOf(word) + messagesOf(word) * entrySize_ > kBufferSize;
}

bool AsyncLogging::retireCurrent() {
  Buffer* fresh = takeSpare();
  if (!fresh) return false;
  uint64_t old = reserve_.exchange(makeReserveWord(fresh->slot), std::memory_order_acq_rel);
  Buffer* full = slots_[old >> kSlotShift];
  full->finalReserved = old;
  queued_.push_back(full);
  // kBlock with no backend running (before start(), after stop()) cannot
  // wait for room, so it drops and counts like kDrop rather than grow
  // without bound.
  if (policy_ == kDrop || state_ == State::kIdle) dropExcess();
  updateRecordedLineGate();
  backendCond_.notify_one();
  return true;
}

void AsyncLogging::dropExcess() {
  if (queued_.size() + inFlight_ <= kMaxPendingBuffers) return;
  // As muduo does: keep the first two waiting buffers, drop the rest. If the
  // backend holds so many that this is not enough, drop the newest too.
  size_t keep = std::min({size_t{2}, queued_.size(), kMaxPendingBuffers - inFlight_});
  for (size_t i = keep; i < queued_.size(); ++i) {
    Buffer* b = queued_[i];
    b->waitForWriters();  // a late writer may still be copying into it
    countDropped(1, b->messages());
    store_->discard(b->slot);  // dropped on purpose: nothing to recover
    recycle(b);
  }
  queued_.resize(keep);
}

void AsyncLogging::updateRecordedLineGate() {
  const bool wanted = queued_.empty() && inFlight_ == 0;
  if (recordedLinesWanted_.load(std::memory_order_relaxed) != wanted) {
    recordedLinesWanted_.store(wanted, std::memory_order_relaxed);
  }
}

void AsyncLogging::countDropped(uint64_t buffers, uint64_t messages) {
  unreported_.buffers += buffers;
  unreported_.messages += messages;
  // In the store too: a spool's recovery reports them if this process dies
  // before it does.
  store_->countDropped(buffers, messages);
}

AsyncLogging::Buffer* AsyncLogging::takeSpare() {
  Buffer* b = nullptr;
  if (!spares_.empty()) {
    b = spares_.back();
    spares_.pop_back();
  } else {
    // The backend keeps spares ready; a producer maps one only when it
    // outruns the backend. Its pages are made resident now, under the lock:
    // one stall of about a millisecond for this producer, instead of a page
    // fault in one line out of every ~37 for the next 4 MiB (the whole of
    // the p99.9 latency). The other producers need this buffer anyway, so
    // the lock costs them nothing more.
    b = install();
    if (!b) return nullptr;
  }
  b->reset();
  b->sequence = ++buffersActivated_;
  b->seal = store_->activate(b->slot);
  return b;
}

size_t AsyncLogging::freeSlot() const {
  size_t slot = 0;
  while (slot < kMaxBuffers && slots_[slot] != nullptr) ++slot;
  return slot;
}

AsyncLogging::Buffer* AsyncLogging::install() {
  size_t slot = freeSlot();
  assert(slot < kMaxBuffers && "AsyncLogging: buffer bound broken");
  char* memory = store_->memoryFor(slot);
  if (!memory) return nullptr;
  ++buffersMapped_;
  Buffer* b = new Buffer(slot);
  b->data = memory;
  return slots_[slot] = b;
}

void AsyncLogging::prepareSpares(std::unique_lock<std::mutex>& lock) {
  while (spares_.size() < kPreparedSpares) {
    size_t slot = freeSlot();
    if (slot == kMaxBuffers) return;
    Buffer* b = slots_[slot] = new Buffer(slot);  // claims the slot
    lock.unlock();
    char* memory = store_->memoryFor(slot);  // the slow part, outside the lock
    lock.lock();
    if (!memory) {
      slots_[slot] = nullptr;
      delete b;
      return;
    }
    b->data = memory;
    ++buffersMapped_;
    spares_.push_back(b);
  }
}

void AsyncLogging::recycle(Buffer* b) {
  // Kept, however many: while producers outrun the backend they will need
  // every one again, and mapping a fresh buffer costs a producer about a
  // millisecond under the lock. trimSpares() gives them back once the burst is over.
  spares_.push_back(b);
}

void AsyncLogging::trimSpares() {
  while (spares_.size() > kMaxSpares) {
    release(spares_.back());
    spares_.pop_back();
  }
}

void AsyncLogging::release(Buffer* b) {
  store_->release(b->slot, b->data);
  slots_[b->slot] = nullptr;
  delete b;
}

void AsyncLogging::start() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (state_ != State::kIdle) return;
  state_ = State::kStarting;
  thread_ = std::thread(&AsyncLogging::threadFunc, this);
  producerCond_.wait(lock, [this] { return state_ != State::kStarting; });
}

void AsyncLogging::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ != State::kRunning) return;
    state_ = State::kStopping;
    backendCond_.notify_one();
  }
  thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = State::kIdle;
  producerCond_.notify_all();
}

void AsyncLogging::flush() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (state_ == State::kRunning) {
      uint64_t ticket = ++flushRequested_;
      backendCond_.notify_one();
      producerCond_.wait(lock, [&] { return flushDone_ >= ticket || state_ == State::kIdle; });
    }
  }
  // Then the lines handed to the forwards.
  if (forwards_->any()) forwards_->flush();
}

void AsyncLogging::requestReopen() {
  // Nothing else: no lock, no notify, so a signal handler may call it.
  reopenRequested_.store(true);
}

AsyncLogging::Stats AsyncLogging::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s;
  s.messagesDropped = dropped_.messages + unreported_.messages;
  s.buffersDropped = dropped_.buffers + unreported_.buffers;
  s.producerWaits = producerWaits_;
  s.linesWritten = linesWritten_.load(std::memory_order_relaxed);
  s.crashSafe = store_->crashSafe();
  s.linesRecovered = linesRecovered_;
  s.buffersMapped = buffersMapped_;
  for (const Buffer* b : slots_) s.buffersHeld += b != nullptr;
  s.file = fileStats_;
  return s;
}

namespace {
// After a round that found no record, the backend looks at the queues again
// this soon, and then every flushInterval (their producers wake it only when
// a queue fills up).
constexpr std::chrono::milliseconds kRecordPollInterval{1};
}  // namespace

void AsyncLogging::threadFunc() {
  std::vector<Buffer*> batch;
  batch.reserve(kMaxBuffers);
  // Named for top -H, ps -L and gdb; start() returns after this, so the
  // name is there as soon as the logger is running.
  ::prctl(PR_SET_NAME, kBackendThreadName, 0, 0, 0);
  std::unique_lock<std::mutex> lock(mutex_);
  state_ = State::kRunning;
  producerCond_.notify_all();
  bool recordsCame = false;  // the last round formatted records
  bool recordsSeen = false;  // ... or the one before it
  auto lastWrite = std::chrono::steady_clock::now();
  const auto interval = std::chrono::seconds(flushInterval_);
  LogFile::Stats announced = output_.stats();  // as of the last afterWrite_ call
  for (;;) {
    // Records came last round: look again at once, they are likely still
    // coming; none: wait a little, then up to the interval.
    if (queued_.empty() && state_ != State::kStopping && flushRequested_ == flushDone_ &&
        !wakeRequested_ && !recordsCame) {
      backendWaiting_ = true;
      backendCond_.wait_for(lock, recordsSeen ? kRecordPollInterval : interval);
      backendWaiting_ = false;
    }
    wakeRequested_ = false;
    bool stopNow = state_ == State::kStopping;
    // Woken by the interval, a flush or stop with no full buffer waiting:
    // the producers are not outrunning the backend.
    bool idle = queued_.empty();
    uint64_t flushTarget = flushRequested_;
    const bool flushAsked = flushTarget != flushDone_;
    // Take the partly filled current buffer too: lines must not wait longer
    // than flushInterval, and stop/flush must see everything before them.
    Dropped dropped = takeBatch(batch);
    // Taken with the flush target, so a flush() after requestReopen() sees
    // the new file. Any file started while this batch is written was started
    // after the request, so it serves.
    bool reopen = reopenRequested_.exchange(false);
    lock.unlock();

    uint64_t filesBefore = output_.stats().filesCreated;
    const auto now = std::chrono::steady_clock::now();
    const bool due = now - lastWrite >= interval;
    const bool writeAll = stopNow || flushAsked || reopen || due;
    if (records_) {
      // Records are formatted as they come and written when the line buffer
      // fills, when they stop coming, when a flush, stop or the interval
      // asks, and before any shared buffer: the records committed before a
      // thread put its lines there (the shared mode, RecordQueue.h) were
      // committed before the batch was taken, so they are all here.
      const size_t formatted = drainRecords(false);
      if (writeAll || formatted == 0 || !batch.empty() ||
          records_->bufferedBytes() >= RecordQueues::kLineBufferSize / 4) {
        const bool any = records_->bufferedBytes() > 0;
        records_->writeLines();
        if (any && batch.empty() && dropped.messages == 0 && !writeAll) output_.flush();
      }
      recordsSeen = recordsCame || formatted > 0;
      recordsCame = formatted > 0;
    }
    if (!batch.empty() || dropped.messages > 0 || writeAll) writeBatch(batch, dropped);
    if (writeAll) lastWrite = now;
    if (reopen && output_.stats().filesCreated == filesBefore) output_.rollFile();
    LogFile::Stats fileStats = output_.stats();
    if (afterWrite_ && (fileStats.writtenBytes != announced.writtenBytes ||
                        fileStats.filesCreated != announced.filesCreated)) {
      announced = fileStats;
      afterWrite_();
    }

    lock.lock();
    fileStats_ = fileStats;
    if (idle) trimSpares();  // the burst is over: its spares go back
    const bool buffersInUse = !batch.empty();
    batch.clear();
    flushDone_ = flushTarget;
    producerCond_.notify_all();
    if (stopNow && queued_.empty()) break;
    // With records, lines come through the buffers only in a flood (the
    // shared mode): spares are mapped ahead then, not while records flow.
    if (!records_ || buffersInUse) prepareSpares(lock);
  }
}

AsyncLogging::Dropped AsyncLogging::takeBatch(std::vector<Buffer*>& batch) {
  // The backend never waits for room: only it can make room. (With kBlock
  // this may queue one buffer over the bound, briefly.) Should no fresh
  // buffer be had, the current one stays and is taken next time.
  if (bytesOf(reserve_.load(std::memory_order_relaxed)) != 0) retireCurrent();
  batchThrough_ = slots_[reserve_.load(std::memory_order_relaxed) >> kSlotShift]->sequence - 1;
  batch.swap(queued_);
  inFlight_ = batch.size();
  updateRecordedLineGate();
  Dropped dropped = unreported_;
  dropped_.buffers += dropped.buffers;
  dropped_.messages += dropped.messages;
  unreported_ = Dropped();
  return dropped;
}

void AsyncLogging::writeLeftovers() {
  std::vector<Buffer*> batch;
  Dropped dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped = takeBatch(batch);
  }
  // The records before the shared buffers, as the backend writes them.
  if (records_ && drainRecords(true) > 0) output_.flush();
  if (!batch.empty() || dropped.messages > 0) writeBatch(batch, dropped);
}

void AsyncLogging::writeBatch(const std::vector<Buffer*>& batch, Dropped dropped) {
  if (dropped.messages > 0) {
    const std::string line =
        detail::dropReport(Timestamp::now(), dropped.buffers, dropped.messages);
    std::fputs(line.c_str(), stderr);
    store_->writeReport(line.data(), line.size(), dropped.buffers, dropped.messages, &output_);
    forwardLines(line.data(), line.size());
  }
  for (Buffer* b : batch) {
    // Every buffer before this one is written or was dropped (the batch is
    // in order, and the ones before it were taken earlier), and the records
    // held behind them go first.
    setWrittenThrough(b->sequence - 1);
    releaseHeldRecords(b->sequence);
    b->waitForWriters();
    linesWritten_.fetch_add(b->messages(), std::memory_order_relaxed);
    // Written at once (LogFile is unbuffered); a failure is LogFile's to
    // count and report, and the buffer is done with either way. Recorded
    // lines are formatted first, the buffer's lines in one piece, so that
    // the spool's record of the write (and a recovery's undoing of it)
    // covers them all.
    if (b->holdsRecordedLines.load(std::memory_order_relaxed)) {
      if (!formatted_) formatted_ = std::make_unique<spool::Lines>(output_.format());
      formatted_->clear();
      spool::appendMessages(b->data, kBufferSize, b->messages(), formatted_.get());
      store_->write(b->slot, formatted_->data(), formatted_->size(), &output_);
      forwardLines(formatted_->data(), formatted_->size());
    } else {
      store_->write(b->slot, b->data, b->length(entrySize_), &output_);
      forwardLines(b->data, b->length(entrySize_));
    }
    // The threads whose last shared line was in it may go back to their queues.
    setWrittenThrough(b->sequence);
    // Its room goes back now, not after the whole batch: producers waiting
    // under kBlock refill while the rest of the batch is written.
    std::lock_guard<std::mutex> lock(mutex_);
    recycle(b);
    --inFlight_;
    updateRecordedLineGate();
    producerCond_.notify_all();
  }
  // So is every buffer before the one that was current when the batch was
  // taken: a dropped one holds back no thread's records.
  setWrittenThrough(batchThrough_);
  releaseHeldRecords(UINT64_MAX);
  output_.flush();
}

void AsyncLogging::forwardLines(const char* lines, size_t len) {
  if (!forwards_->any()) return;
  detail::LineForwards::Run run(*forwards_);
  forwards_->takeLines(std::string_view(lines, len));
}

void AsyncLogging::releaseHeldRecords(uint64_t before) {
  if (!records_) return;
  for (;;) {
    const uint64_t held = records_->heldFor();
    if (held == 0 || held >= before || !writtenThrough(held)) return;
    drainRecords(true);
  }
}

}  // namespace muon
