// RecordQueue: one thread's log records on their way to the thread that
// formats them (deferred formatting; docs/logging.md).
//
// A LOG_* statement whose line goes to a sink that formats lines itself
// (a RecordSink: AsyncLogging) does not format its line: it writes a record
// (RecordHeader and its operands, LogOperands.h) into its thread's queue,
// and a thread of the sink's (AsyncLogging's backend) turns records into
// text lines. The queue is a ring of bytes with one producer, the thread,
// and one consumer, that thread: the producer's fast path is a compare, a copy and a plain store
// (no lock, no atomic read-modify-write, no cache line written by another
// producer). Its memory is made resident when the queue is made and is
// reused from then on, so a statement never takes a page fault on it; a
// ring of whole 2 MiB huge pages (the default size) is asked for in them.
//
// A record starts at a multiple of 8 and is contiguous: when one does not
// fit before the ring's end, a wrap marker (a size of 0) fills the rest and
// the record goes to the start.
//
// Thread safety: the producer calls reserve*/commit, only from the thread
// that owns the queue; the consumer calls the consumer's functions, from one
// thread at a time (the backend, or the sink's destructor once the
// backend is gone). Either side may run while the other does.
//
// This is an internal header of Logging.cc and the sinks that take records.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace muon {
namespace detail {

struct LogSite;

// What a record starts with. A statement record is followed by its
// operands; a text record by a whole line (what a statement wrote as text,
// or what a program appended to the sink itself).
struct RecordHeader {
  enum Kind : uint8_t {
    kWrap = 0,        // no record: the ring goes on at its start (size is 0)
    kStatementCount,  // a statement; its time is `key`, a TscClock::readCounter() reading
    kStatementMicros, // a statement; `time` is microseconds since the epoch
    kText,            // a finished line, `length` bytes, with its '\n'
  };
  uint32_t size;    // of the header and what follows, a multiple of 8; 0: kWrap
  uint16_t length;  // bytes after the header that count
  uint8_t kind;
  uint8_t level;    // Logger::LogLevel (statements)
  uint64_t key;     // readCounter() when made: the consumer takes records in its order
  int64_t time;
  const LogSite* site;  // the statement's (static storage)
};
static_assert(sizeof(RecordHeader) == 32, "RecordHeader is four words");

// A record's size in the ring for `length` bytes after the header.
constexpr size_t recordSize(size_t length) { return (sizeof(RecordHeader) + length + 7) & ~size_t{7}; }

class RecordQueue;

// The producer's end of a RecordQueue as a LOG_* statement's common path
// sees it (Statement.h): where the next record goes, and up to where a
// statement may start one in place without asking the queue. The queue
// keeps `limit` such that a record of kMaxStatement bytes at `write` is
// contiguous and leaves the ring at most a quarter full (half after a wake
// that found the consumer waiting for work: RecordQueue::crowded) by the
// last look at the consumer. While the queue is crowded (its statements
// make their own lines) and in the shared mode, a statement still records
// in place, at `write`, where the ring has room for a record of the largest
// size after what it holds, but the record is not published: its commit
// makes its line from it (Statement::commitSlow), and the next statement's
// record, or the line itself as a kText record, goes to the same place.
// While a statement writes its record in place, `write` holds `openMark`:
// kLaneOpen, or kLaneFormat while statements make their lines, which the
// common commit does not take; and kLaneDisturbed once anything else on the
// thread needed the ring meanwhile (a << operand that logs): that statement
// then ends by the slow path.
// Owner thread only, but `published`, which the consumer reads.
struct RecordLane {
  static constexpr uintptr_t kLaneOpen = ~uintptr_t{0};
  static constexpr uintptr_t kLaneDisturbed = ~uintptr_t{1};
  static constexpr uintptr_t kLaneFormat = ~uintptr_t{2};
  // The largest statement record written in place: its header and
  // LogStream::kBufferSize bytes of operands.
  static constexpr size_t kMaxStatement = sizeof(RecordHeader) + 4000;

  bool busy() const { return reinterpret_cast<uintptr_t>(write) >= kLaneFormat; }
  // Whether the statement open in the lane makes its line when it ends
  // (the queue crowded, or in the shared mode), undisturbed.
  bool formatting() const { return reinterpret_cast<uintptr_t>(write) == kLaneFormat; }

  RecordQueue* queue = nullptr;         // whose lane this is

  char* write = nullptr;
  char* limit = nullptr;
  uintptr_t openMark = kLaneOpen;  // what `write` holds while a statement is open
  // Where the committed records end, as a place in the ring (its end, once
  // a record ends there, until the next begins at the start). The consumer
  // turns it into a position in the ring's stream of bytes
  // (RecordQueue::committed); a statement's commit stores its record's end
  // as it is. Written by the owner only, so it reads it relaxed.
  std::atomic<char*> published{nullptr};
};

// A sink that takes records: what the producer's slow paths ask of it.
// Implemented by AsyncLogging; any thread may call these.
class RecordSink {
 public:
  RecordSink();
  // Never 0 and never reused in the process: a thread's cached queue names
  // the sink it belongs to by it.
  uint64_t id() const { return id_; }

  // This thread's queue for this sink, made on first use; nullptr if none
  // can be made (no memory): the statement then writes text instead.
  virtual RecordQueue* queueForThisThread() = 0;
  // The queue is filling up: the consumer should run soon. Returns whether
  // it was waiting for work (it then catches up soon) rather than busy.
  virtual bool wake() = 0;
  // The queue has no room for a record: wait for room (true: look again) or
  // count the record as dropped (false), as the sink's overflow policy says.
  virtual bool waitForRoom(RecordQueue& queue) = 0;
  // The shared mode (RecordQueue::shared()): appends a finished line to the
  // sink's shared buffers, which its consumer writes after the records
  // committed before it. Returns the sequence number of the buffer it went
  // to (0: dropped, and counted).
  virtual uint64_t appendShared(const char* line, size_t len) = 0;
  // Makes sure that lines appended to the shared buffers from now on go to
  // a buffer after `sequence` (one a thread's last line went to), taking a
  // fresh buffer if `sequence` is the one being filled; false if none can
  // be had now. A sink that cannot answers false: its threads then leave
  // the shared mode only once their lines are written.
  virtual bool sealShared(uint64_t sequence) {
    static_cast<void>(sequence);
    return false;
  }
  // A crowded statement's record (RecordQueue::crowded), made by the
  // calling thread into the line the consumer would make of it and appended
  // to `queue` (RecordQueue::appendLine: the queue, or the shared buffers),
  // so that a busy consumer only copies it. False, with nothing written,
  // where the sink leaves it to a Logger, as a sink that cannot answers.
  struct CrowdedRecord {
    const LogSite* site;
    int level;       // a Logger::LogLevel
    uint64_t count;  // the statement's counter reading: the line's order key
    int64_t second;  // its time: seconds since the epoch and the microsecond
    int micro;
    const char* operands;  // its recorded operands (LogOperands.h)
    size_t length;
  };
  virtual bool appendCrowded(RecordQueue& queue, const CrowdedRecord& record) {
    static_cast<void>(queue);
    static_cast<void>(record);
    return false;
  }
  // Whether appendCrowded may take a record: a crowded Logger then keeps
  // recording its operands (in its own buffer) rather than making text.
  virtual bool takesCrowdedRecords() const { return false; }
  // Whether every line in shared buffers up to `sequence` has been written
  // (or dropped).
  bool writtenThrough(uint64_t sequence) const {
    return written_.load(std::memory_order_acquire) >= sequence;
  }

 protected:
  ~RecordSink() = default;
  // The sink has written (or dropped) its shared buffers up to `sequence`.
  void setWrittenThrough(uint64_t sequence) { written_.store(sequence, std::memory_order_release); }

 private:
  const uint64_t id_;
  // Read by threads in the shared mode, written once per buffer.
  alignas(64) std::atomic<uint64_t> written_{0};
};

// The calling thread's last queue and the sink it is for (Logger's fast
// path looks here before asking the sink).
struct ThreadRecordQueue {
  uint64_t sinkId = 0;
  RecordQueue* queue = nullptr;
};
inline thread_local ThreadRecordQueue t_recordQueue;

// The calling thread's queue for `sink`, or nullptr.
inline RecordQueue* recordQueueFor(RecordSink& sink) {
  if (__builtin_expect(t_recordQueue.sinkId == sink.id(), 1)) return t_recordQueue.queue;
  return sink.queueForThisThread();
}

class RecordQueue {
 public:
  // The largest record: a statement's operands fill at most a LogStream's
  // buffer, and a text line is at most that long.
  static constexpr size_t kMaxRecord = recordSize(4096);

  // `capacity` bytes (a power of two, at least 4 x kMaxRecord), resident;
  // std::bad_alloc if the memory cannot be had. `tid` is the producer's.
  RecordQueue(size_t capacity, int tid, std::string tidString);
  ~RecordQueue();
  RecordQueue(const RecordQueue&) = delete;
  RecordQueue& operator=(const RecordQueue&) = delete;

  // ---- producer ----
  // Room for a statement's record of `size` bytes (recordSize(), <=
  // kMaxRecord), contiguous, while the ring is at most a quarter full (half
  // after a wake that found the consumer waiting for work) by the last look
  // at the consumer's position, or nullptr. Never waits.
  char* tryReserve(size_t size) {
    if (__builtin_expect(inPlace_ != nullptr, 0)) vacate();
    if (__builtin_expect(lane_.busy(), 0)) return nullptr;
    settleLap();
    const size_t at = static_cast<size_t>(position()) & mask_;
    if (__builtin_expect(at + size <= capacity_ && position() + size - cachedRead_ <= recordRoom() &&
                             !shared_,
                         1)) {
      return data_ + at;
    }
    return nullptr;
  }
  // Whether this thread's statements must format their own lines, after a
  // fresh look at the consumer's position. Past a quarter full the consumer
  // is woken. If it was busy, it is not keeping up: a record would cost it
  // the formatting, and the statements format their lines, which cost it a
  // copy. If it was only waiting for work, it catches up soon: records go
  // on up to half full (going to text at once left a thread that logs
  // steadily formatting its own lines for good). The lines go into the
  // ring as kText records, in order with the records, so that the thread
  // takes up records again as soon as the consumer has caught up: the
  // two threads share the formatting. Only a quarter further on, when the
  // consumer cannot keep up even with copying, do they go to the sink's
  // larger shared buffers (the shared mode; leaveShared says when it ends).
  bool crowded() {
    if (lane_.busy()) {
      disturbLane();
      return true;
    }
    if (shared_ && (sharedGoesOn() || !leaveShared())) return true;
    cachedRead_ = read_.load(std::memory_order_acquire);
    const uint64_t used = position() + kMaxRecord - cachedRead_;
    if (used <= quarter_) {
      wakeSent_ = false;
      wokeIdle_ = false;
    } else if (!wakeSent_) {
      wakeSent_ = true;
      wokeIdle_ = sink_->wake();
    }
    shared_ = used > recordRoom() + quarter_;
    crowded_ = used > recordRoom();
    refreshLane();
    return crowded_;
  }

  // A statement found the lane past its limit (the ring's end, or as full
  // as a record may leave it by the last look at the consumer), and a
  // fresh look (crowded()) found the queue not crowded: at the ring's end,
  // starts the next lap with a wrap marker where the ring has room for it.
  // True if a statement may now start its record in place; else it takes
  // the slow path, as it would have. Not while the lane is busy.
  bool reopenLane();

  // ---- the shared mode ----
  // While the consumer is behind, this thread's finished lines go to the
  // sink's shared buffers (RecordSink::appendShared) instead of the ring:
  // there they cost the consumer a write and no copy, and wait in the
  // sink's larger buffers. The consumer writes the records committed
  // before it takes a shared buffer ahead of that buffer. The thread comes
  // back to the ring once its last line in the shared buffers has been
  // written, or sooner, once the consumer has caught up with the ring,
  // behind a hold (hold()). Either way its lines keep their order.
  bool shared() const { return shared_; }
  // In the shared mode, with the lane not busy: whether the mode goes on
  // for the next statement, crowded() then saying so with nothing changed.
  // Its lines still wait in the shared buffers (or those of the hold
  // before do), and the consumer has not caught up with the ring (it is
  // over an eighth full). Inline, so that a statement of a thread that
  // stays shared learns it at once (Statement::commitFormatting, and
  // beginSlow where the ring has no room to record in place).
  bool sharedGoesOn() {
    if (stillShared()) return true;
    if (sink_->writtenThrough(sharedThrough_)) return false;
    cachedRead_ = read_.load(std::memory_order_acquire);
    return position() - cachedRead_ > quarter_ / 2;
  }
  // Queues a finished line (a statement's text, or what the thread
  // appended to the sink itself) where this thread's lines go now: to the
  // shared buffers in the shared mode, or when it is too long for a record
  // (the thread then enters the shared mode), else into the ring as a kText
  // record ordered by `key` (the counter when it was logged). A line the
  // sink's overflow policy drops is counted there.
  void appendLine(const char* line, size_t len, uint64_t key) {
    if (shared_ || lane_.busy() || len > kMaxText) {
      appendShared(line, len);
    } else {
      static_cast<void>(appendText(line, len, key));
    }
  }
  // Room for any record: at once while the ring is at most half full (no
  // wrap), else by the slow path, which may wait for room or drop the
  // record (nullptr), as the sink says.
  char* reserve(size_t size) {
    if (__builtin_expect(inPlace_ != nullptr, 0)) vacate();
    settleLap();
    const size_t at = static_cast<size_t>(position()) & mask_;
    if (__builtin_expect(at + size <= capacity_ && position() + size - cachedRead_ <= half_, 1)) {
      return data_ + at;
    }
    return reserveSlow(size);
  }

  // A statement may write its record in place, in the room tryReserve()
  // gave it, and commit it when it ends. Should another record be reserved
  // before then (a << operand that logs), `moveOut(owner)` is called first:
  // the open record leaves the ring for its owner's own buffer, to be
  // committed after the one nested in it, as a line would be.
  using MoveOut = void (*)(void* owner);
  void openInPlace(void* owner, MoveOut moveOut) {
    inPlace_ = owner;
    moveOut_ = moveOut;
    lane_.limit = nullptr;  // statements start elsewhere meanwhile
  }
  void closeInPlace() {
    inPlace_ = nullptr;
    refreshLane();
  }
  // The longest line a kText record holds.
  static constexpr size_t kMaxText = kMaxRecord - sizeof(RecordHeader);

  // Makes the record reserved last visible to the consumer.
  void commit(size_t size) {
    lane_.published.store(lane_.published.load(std::memory_order_relaxed) + size,
                          std::memory_order_release);
    refreshLane();
  }
  // The lane a statement's common path writes through (Statement.h).
  RecordLane* lane() { return &lane_; }
  // Whether a statement is writing a record in place now (its lane is open):
  // then nothing else may take room in the ring before it ends. A line goes
  // to the shared buffers instead (crowded() says so), and the statement
  // learns of it when it ends (kLaneDisturbed).
  bool laneBusy() const { return lane_.busy(); }
  // Something needs the ring while a statement writes in place: it goes to
  // the shared buffers (so after every record before the statement's), and
  // the statement, when it ends, goes there too.
  void disturbLane() {
    lane_.write = reinterpret_cast<char*>(RecordLane::kLaneDisturbed);
    shared_ = true;
  }
  // The statement writing in place has ended by the slow path: `write` is
  // where it began again.
  void closeLane(char* start) {
    lane_.write = start;  // it is data_ + (position & mask_): nothing moved it
    refreshLane();
  }
  // Bytes free for the producer now.
  size_t producerFree() const {
    return capacity_ - static_cast<size_t>(position() - read_.load(std::memory_order_seq_cst));
  }
  // The last hold this thread left the shared mode behind (leaveShared):
  // its records from `*position` on wait until the sink has written its
  // shared buffers through `*sequence`. Read committed() first: for every
  // record it covers, the hold read here is that record's, or a later one
  // whose earlier holds' buffers are written. {0, 0} if none was ever set.
  void hold(uint64_t* position, uint64_t* sequence) const {
    *sequence = holdSequence_.load(std::memory_order_acquire);
    *position = holdPosition_.load(std::memory_order_relaxed);
  }
  // Whether `p` is a place in the ring.
  bool holds(const char* p) const { return p >= data_ && p < data_ + capacity_; }
  // The sink this queue belongs to (set by it, before the queue is used).
  void setSink(RecordSink* sink) { sink_ = sink; }

  // ---- consumer ----
  // Where the records end (the producer may be adding more): less than a
  // lap ahead of the consumer, so the place the producer published is
  // that many bytes past readPosition().
  uint64_t committed() const {
    const char* end = lane_.published.load(std::memory_order_acquire);
    return readLocal_ + ((static_cast<uint64_t>(end - data_) - readLocal_) & mask_);
  }
  // Where the next unread record begins.
  uint64_t readPosition() const { return readLocal_; }
  // The record at `position` (readPosition() <= position <= end, `end` a
  // committed() the consumer took), past a wrap marker: moves `*position`
  // to where the record is. nullptr if no record lies before `end`: the
  // position is `end`, or a wrap marker is the last thing before it (its
  // record is reserved, not yet committed); `*position` is then `end`.
  const RecordHeader* recordAt(uint64_t* position, uint64_t end) const;
  // Gives the bytes before `position` back to the producer. seq_cst, not
  // release: a producer about to wait for room registers itself and then
  // looks at this position, and the consumer stores it and then looks for
  // waiters (RecordQueues::drain); one of the two sees the other.
  void release(uint64_t position) {
    readLocal_ = position;
    read_.store(position, std::memory_order_seq_cst);
  }

  // The producer thread's id, as a line's prefix shows it ("%5d ").
  int tid() const { return tid_; }
  const std::string& tidString() const { return tidString_; }
  size_t capacity() const { return capacity_; }

  // Set by the producer's thread when it exits (no record comes after).
  void close() { closed_.store(true, std::memory_order_release); }
  bool closed() const { return closed_.load(std::memory_order_acquire); }

 private:
  // Past the fast path: the ring is over half full (wake the consumer once
  // on the way up), the record must wrap, or there is no room (the sink's
  // waitForRoom). nullptr: the record is dropped.
  char* reserveSlow(size_t size);
  // Makes the rest of the ring, from `at` (the place of position()), a
  // wrap marker and begins the next lap at the ring's start.
  void wrapLap(size_t at);
  // Queues a finished line of `len` bytes (<= kMaxText) as a kText record
  // ordered by `key`; false if it was dropped (the sink counted it).
  bool appendText(const char* line, size_t len, uint64_t key);
  // Appends a finished line to the shared buffers and stays in the shared
  // mode until it is written.
  void appendShared(const char* line, size_t len) {
    // The lane closes on entering the mode; already in it, it is closed.
    if (lane_.busy()) {
      disturbLane();
    } else if (!shared_) {
      shared_ = true;
      refreshLane();
    }
    const uint64_t sequence = sink_->appendShared(line, len);
    if (sequence != 0) sharedThrough_ = sequence;
  }
  // Ends the shared mode, once sharedGoesOn() is false: its lines are
  // written, or the consumer has caught up with the ring (at most an eighth
  // full) and the thread goes back to it behind a hold (false where the
  // sink cannot seal its current buffer yet: the mode goes on). The
  // consumer is not woken for the lines: a thread that logs on fills the
  // shared buffer, which is then written, and one that stopped waits at
  // most the sink's flush interval, formatting its own lines meanwhile
  // (waking the consumer for each partly filled buffer turned them over
  // faster than one producer could fill them). Without the hold a thread
  // that logs on stayed in the shared mode for good: it always has a line
  // in the buffer being filled.
  bool leaveShared();
  // Whether the shared mode cannot end yet, inline: its lines wait in the
  // shared buffers, and so do those of the hold before (one hold at a time:
  // a later one would let the consumer past the earlier one's position).
  bool stillShared() const {
    return !sink_->writtenThrough(sharedThrough_) &&
           !sink_->writtenThrough(holdSequence_.load(std::memory_order_relaxed));
  }
  uint64_t position() const {
    return lap_ + static_cast<uint64_t>(lane_.published.load(std::memory_order_relaxed) - data_);
  }
  // Before a record is placed: once the records end at the ring's end, the
  // next one begins a lap at its start (the same position for both sides).
  void settleLap() {
    if (lane_.published.load(std::memory_order_relaxed) == data_ + capacity_) {
      lap_ += capacity_;
      // The same position to the consumer; release, so that one that reads
      // it sees what the store of the ring's end published.
      lane_.published.store(data_, std::memory_order_release);
    }
  }
  // How full the ring may be after a statement's record: a quarter, or
  // half after a wake that found the consumer waiting for work (crowded()).
  size_t recordRoom() const { return wokeIdle_ ? half_ : quarter_; }
  // Sets the lane's limit from the position, the last look at the
  // consumer and the mode (RecordLane). Not while the lane is busy.
  void refreshLane();
  void vacate() {
    void* owner = inPlace_;
    inPlace_ = nullptr;
    moveOut_(owner);
    refreshLane();
  }

  char* const data_;
  const size_t capacity_;
  const size_t mask_;
  const size_t half_;
  const size_t quarter_;
  const int tid_;
  const std::string tidString_;
  RecordSink* sink_ = nullptr;

  // The producer's line: its lane.
  alignas(64) RecordLane lane_;
  uint64_t lap_ = 0;          // the position of the ring's start in this lap
  uint64_t cachedRead_ = 0;   // read_ when last looked at
  bool wakeSent_ = false;     // wake() asked since the ring was last seen emptier
  bool wokeIdle_ = false;     // ... and found the consumer waiting for work
  void* inPlace_ = nullptr;   // the statement writing a record in place
  MoveOut moveOut_ = nullptr;
  bool shared_ = false;        // the shared mode
  bool crowded_ = false;       // what crowded() found at its last fresh look
  uint64_t sharedThrough_ = 0; // the buffer of its last line in the shared buffers
  // The hold (hold()): the position stored first, the sequence after it
  // (release), both before any record past the position is committed. A
  // consumer that reads a sequence reads its position or a later one; a
  // later position comes with a sequence already written (one hold at a
  // time), and it has not seen the records past it.
  std::atomic<uint64_t> holdSequence_{0};
  std::atomic<uint64_t> holdPosition_{0};
  // The consumer's line.
  alignas(64) std::atomic<uint64_t> read_{0};
  uint64_t readLocal_ = 0;
  std::atomic<bool> closed_{false};
};

}  // namespace detail
}  // namespace muon
