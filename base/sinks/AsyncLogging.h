// AsyncLogging: many threads log, one backend thread writes the file.
//
// muduo's double buffering, with the front end made lock-free: producers
// reserve space in the current 4 MiB buffer with one fetch_add and copy
// their line in; only the producer that finds the buffer full takes the lock,
// to queue it and put a spare in its place. The backend thread wakes when a
// buffer fills or every flushInterval seconds, takes the queued buffers under
// the lock and writes them through a LogFile outside it.
//
// At most kMaxPendingBuffers full buffers may wait. Past that, kDrop (the
// default) drops all queued buffers but the first two, as muduo does, counts
// every message in them, and writes
//   "Dropped log messages at <time>, N larger buffers (M messages)"
// to the file and to stderr; kBlock makes producers wait, so nothing is lost
// (while the backend runs: with no backend to wait for, before start() or
// after stop(), kBlock drops and counts as kDrop does). A producer that needs
// a fresh buffer when none can be mapped does the same: it never throws.
//
// Deferred formatting (crash-safe mode: see below): attached with
// Logger::attach, LOG_* statements do not format their lines; each thread
// records its statements' operands into a queue of its own (RecordQueue.h,
// Options::threadQueueBytes), and the backend thread turns them into lines,
// byte for byte the ones the statements would have made, and writes them.
// A thread whose queue is over a quarter full while the backend is busy
// (behind), or over half full, formats its own lines, as without deferral,
// into its queue (the backend copies them, and formats the records before
// them meanwhile); a quarter further on, into the shared buffers below
// (RecordQueue.h, the shared mode), until the backend has caught up with
// its queue. Lines and records from one thread keep their order; across
// threads, the backend merges records by the time they were logged.
//
// Crash-safe mode (Options::crashSafe): the buffers live in a spool file in
// the log directory (LogSpool.h), so every line is in the kernel's page cache
// once append() returns and survives kill -9, abort() or an OOM kill of the
// process. Formatting is deferred here too, in another way: a statement
// formats its line's head (time, thread, level) and records its operands
// after it (a recorded line, RecordFormatter.h), and that goes into the
// spool; the backend formats the operands as it writes the buffer out, and
// a recovery does the same, so the spool holds all the line needs. The next crash-safe AsyncLogging of the same basename (or
// muon-recover) writes those lines out (SpoolRecovery.h); this constructor
// does that first, before any line of its own. A relative basename is taken
// against the working directory at construction (a later chdir moves
// nothing), so that recovery from any directory finds the files. kDrop
// still drops in this mode; the drop counts are kept in the spool, so that
// a process killed before it wrote its "Dropped log messages" line has it
// written by the recovery. Power loss and kernel crashes are not covered
// (docs/logging.md).
//
// Thread safety: append() and flush() from any thread, requestReopen() also
// from a signal handler; start() and stop() from the owning thread. Lines
// from one thread stay in order. A forked child must not log through its
// parent's AsyncLogging (it has no backend; in crash-safe mode its lines
// would land in the parent's spool): give the child its own output.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "muon/base/FileUtil.h"
#include "muon/base/LogFile.h"
#include "muon/base/internal/RecordQueue.h"

namespace muon {

struct LogRecord;
class BufferStore;
class RecordQueues;
namespace spool {
class Lines;
}
namespace detail {
class LineForwards;
struct LineEncoder;
}

class AsyncLogging : private detail::RecordSink {
 public:
  enum OverflowPolicy { kDrop, kBlock };

  struct Options {
    // Seconds between two writes of whatever has been logged (and two
    // flushes of the file): the most a line waits in memory. 3, as muduo.
    int flushInterval = 3;
    // What producers do when kMaxPendingBuffers buffers wait: kDrop keeps the
    // process going at full speed when the disk cannot follow (the default,
    // as muduo, in both modes: crash safety is about the process dying, not
    // the disk being slow); kBlock loses nothing and slows producers to the
    // disk's pace. A crash-safe program that must keep every line sets kBlock.
    OverflowPolicy policy = kDrop;
    // Keep the buffers in a spool file beside the log (basename.<pid>.spool)
    // so that no committed line is lost when the process dies, and recover
    // dead processes' spools at construction. Off by default: it costs a
    // spool file of up to (kMaxPendingBuffers + 8) x 4 MiB on disk while
    // logging (4-5 buffers in steady state) and some speed (docs/logging.md).
    bool crashSafe = false;
    // What the log files' LogFile does beyond writing: retention (maxFiles,
    // maxTotalBytes, maxAgeSeconds) and the basename.log link. All off by default.
    LogFile::Options files;
    // Deferred formatting (not in crash-safe mode): each thread that logs
    // through Logger::attach(*this) gets a queue of this many bytes
    // (rounded up to a power of two, at least 64 KiB), resident from its
    // first statement, for the records the backend formats; from 2 MiB up
    // in transparent huge pages where the kernel grants them, which keeps
    // a statement from waiting on the TLB now and then. A thread's
    // records wait there; past a quarter full with the backend busy (half,
    // if the backend was only asleep) its statements format their own lines
    // into the shared buffers instead. A quarter of 2 MiB holds
    // about five thousand short statements: some 10 ms of a thread logging
    // half a million lines a second, while the backend is in a write(2) the
    // kernel holds up, or waits for a core. A thread's own append()s of
    // finished lines may fill it; the overflow policy then applies to them
    // one by one.
    size_t threadQueueBytes = 2 * 1024 * 1024;
    // Called by the backend thread after a round in which it wrote bytes to
    // the log files or started a new file (at most once per round, so at
    // most once per buffer or flushInterval), outside every lock. For a
    // reader of the files (net/relp/LogShipper.h): it must only wake that
    // reader (post to its loop, set a flag), never block, log or call into
    // this AsyncLogging. Lines written after stop() (the destructor's
    // leftovers) are not announced. Empty: nothing is called.
    std::function<void()> afterWrite;
  };

  static constexpr size_t kBufferSize = 4 * 1024 * 1024;
  static constexpr size_t kMaxPendingBuffers = 25;
  // The backend thread's name (what top -H and ps -L show; at most 15 chars).
  static constexpr const char* kBackendThreadName = "muon-logging";

  AsyncLogging(const std::string& basename, off_t rollSize, int flushInterval = 3,
               OverflowPolicy policy = kDrop);
  AsyncLogging(const std::string& basename, off_t rollSize, const Options& options);
  // stop(), then writes in the calling thread whatever was appended after it.
  ~AsyncLogging();
  AsyncLogging(const AsyncLogging&) = delete;
  AsyncLogging& operator=(const AsyncLogging&) = delete;

  // Copies one line in. A line longer than a buffer can hold is cut to fit.
  // Lines appended before start() wait in the buffer; they are not lost.
  // From a thread that logs through Logger::attach(*this), a line of at
  // most 4 KiB goes to that thread's queue, after its statements' records.
  void append(const char* logline, size_t len);

  // For Logger::attach: what the files hold (Options::files.format). A JSON
  // AsyncLogging takes the lines statements format themselves as records
  // and writes their JSON (JsonLines.h); its backend writes the JSON of the
  // records it formats.
  LineFormat lineFormat() const { return output_.format(); }
  // For Logger::attach: the records this sink formats itself, or nullptr in
  // crash-safe mode (statements then hand it recorded lines).
  detail::RecordSink* recordSink() { return records_ ? this : nullptr; }
  // For Logger::attach: nullptr unless statements may hand it recorded
  // lines (crash-safe mode); then a flag, true while it wants them: while
  // no full buffer waits for the backend or is being written. A backend
  // that is behind formats nothing more: the statements format their own
  // lines, in parallel, as the text path does, until it catches up.
  const std::atomic<bool>* recordedLineGate() const {
    return entrySize_ != 0 ? &recordedLinesWanted_ : nullptr;
  }
  // Takes a recorded line (RecordFormatter.h): `len` bytes, text but for
  // the operands between the first `head` and the last `trailer` bytes. It
  // goes into the spool as it is; the backend (or a later recovery) formats
  // it. Any thread.
  void appendRecordedLine(const char* line, size_t len, size_t head, size_t trailer);

  // Forwarding: every line this AsyncLogging writes goes to `sink` too, as
  // its record (LogRecord.h), for lines at or above `minLevel` (a
  // Logger::LogLevel; every line by default), while the
  // returned Forward lives. `sink` is any object with
  // `void append(const LogRecord&)` and `void flush()` (JournaldSink,
  // SyslogSink):
  //
  //   muon::JournaldSink journal;
  //   muon::AsyncLogging log("/var/log/app/server", 64 << 20);
  //   auto forwarded = log.forward(journal);  // declared after both: ends first
  //   auto attached = muon::Logger::attach(log);
  //
  // Statements stay deferred (their cost is the same as without the
  // forward): the backend makes each record's parts as it formats its line
  // and hands them over; a line that reached it as text (appended whole,
  // a crash-safe buffer's line, the drop report) is read back into its
  // parts (JSON or text, as LineEncoders.h's readers do), or sent as only a
  // message if it is in neither layout. Lines dropped before the backend
  // (kDrop) are not forwarded; the sink sees the drop report. Lines
  // recovered from dead processes' spools at construction are not
  // forwarded (no Forward exists yet).
  //
  // The backend calls the sink's append() in order, one line at a time: it
  // must return soon (a sink that queues, as JournaldSink and SyslogSink
  // do) and never log through this AsyncLogging. flush() flushes the sink
  // too, after this AsyncLogging's lines. The Forward's end (its
  // destructor, or reset()) waits for a line being handed over and then
  // none reaches the sink again; it must end before the sink does. Any
  // thread.
  class Forward {
   public:
    Forward() = default;
    // Stops the forwarding now (if it still runs).
    void reset() { registration_.reset(); }

   private:
    friend class AsyncLogging;
    // One sink's place among the forwards; its end removes it.
    struct Registration {
      ~Registration();
      // Shared: a Forward that outlives its AsyncLogging still ends safely.
      std::shared_ptr<detail::LineForwards> forwards;
      uint64_t id;
    };
    explicit Forward(std::unique_ptr<Registration> registration)
        : registration_(std::move(registration)) {}
    std::unique_ptr<Registration> registration_;
  };
  template <typename Sink>
  [[nodiscard]] Forward forward(Sink& sink, int minLevel = 0) {
    return addForward(
        &sink, [](void* s, const LogRecord& record) { static_cast<Sink*>(s)->append(record); },
        [](void* s) { static_cast<Sink*>(s)->flush(); }, minLevel);
  }

  // Starts the backend thread (named kBackendThreadName); returns once it runs.
  void start();
  // Writes every line appended before the call, flushes the file, then
  // joins the backend. Idempotent.
  void stop();
  // Waits until every line appended before the call is written and the file
  // flushed (LOG_FATAL calls this before abort). Returns at once if the
  // backend is not running.
  void flush();
  // Asks the backend to start a new log file (LogFile::rollFile) after
  // writing what it holds: the SIGHUP of a logrotate "postrotate" script.
  // Async-signal-safe and callable from any thread: it only sets a lock-free
  // atomic flag and wakes no one. The backend checks the flag each time it
  // wakes, so the new file comes at the next flush(), full buffer or tick
  // (at most flushInterval seconds later); lines from before the request may
  // still go to the old file, and none is lost or split. If the backend's
  // write starts a new file anyway (the old one was renamed or deleted,
  // which LogFile notices at each flush), that file serves the request.
  void requestReopen();

  struct Stats {
    uint64_t linesWritten = 0;     // lines and records handed to the LogFile
    uint64_t messagesDropped = 0;  // lines and records
    uint64_t buffersDropped = 0;
    uint64_t producerWaits = 0;  // kBlock: times a producer waited for room
    bool crashSafe = false;      // the buffers are in a spool (asked for and set up)
    uint64_t linesRecovered = 0;  // from dead processes' spools, at construction
    // Buffers given memory so far (each costs ~1 ms of page faults), and
    // buffers that have memory now (at most kMaxPendingBuffers + 8).
    uint64_t buffersMapped = 0;
    uint64_t buffersHeld = 0;
    LogFile::Stats file;
  };
  Stats stats() const;
  // The spool file ("" unless crash-safe).
  std::string spoolPath() const;

  // For tests: the LogFile's write seam (set before start()).
  void setWriteFunction(WriteFunction write);

 private:
  struct Buffer;
  // Every buffer that can exist at once: kMaxPendingBuffers waiting or being
  // written, the current one, and a few spares.
  static constexpr size_t kMaxBuffers = kMaxPendingBuffers + 8;
  static constexpr size_t kMaxSpares = 4;       // kept once a burst is over; the rest released
  static constexpr size_t kPreparedSpares = 2;  // mapped ahead by the backend

  // The lifecycle: kIdle (constructed, or stopped) -> start() -> kStarting
  // -> the backend runs -> kRunning -> stop() -> kStopping -> joined -> kIdle.
  enum class State { kIdle, kStarting, kRunning, kStopping };

  struct Dropped {
    uint64_t buffers = 0;
    uint64_t messages = 0;
  };

  void threadFunc();
  Forward addForward(void* sink, void (*appendRecord)(void*, const LogRecord&),
                     void (*flushSink)(void*), int minLevel);
  // Drains the record queues, their records to the forwards too (if any).
  size_t drainInto(const std::function<void()>& roomMade);
  // RecordSink, for the statements' records (RecordQueues.h).
  detail::RecordQueue* queueForThisThread() override;
  bool wake() override;
  bool waitForRoom(detail::RecordQueue& queue) override;
  uint64_t appendShared(const char* line, size_t len) override;
  bool sealShared(uint64_t sequence) override;
  // A JSON AsyncLogging's crowded records, made straight from their
  // operands where the JSON encoder can (LineEncoders.h).
  bool appendCrowded(detail::RecordQueue& queue, const CrowdedRecord& record) override;
  bool takesCrowdedRecords() const override;
  // Formats and writes the records held behind shared buffers that are
  // now written (RecordQueues::heldFor), those whose turn comes before the
  // buffer numbered `before`. Backend thread.
  void releaseHeldRecords(uint64_t before);
  // append() without the thread's queue, with the store's index if it has one.
  uint64_t appendToBuffer(const char* logline, size_t len);
  // append()'s line, in the file's format: into this thread's queue, in
  // order with its records, or into the buffers.
  void appendInOrder(const char* logline, size_t len);
  // Formats what the queues hold; writes the lines if `write` or the
  // buffer filled. Backend thread (or the destructor once it is gone).
  size_t drainRecords(bool write);
  // Copies `message` (TextLine or RecordedLine, AsyncLogging.cc) into the
  // current buffer, without (false) or with (true) the store's per-message index.
  // Returns the sequence number of the buffer it went to (0: dropped).
  template <bool kIndexed, typename Message>
  uint64_t appendTo(const Message& message);
  // A reservation of `len` bytes crossed the end of `full`: retires it
  // (or waits, kBlock). True: reserve again; false: the message was
  // dropped (and counted).
  bool appendSlow(Buffer* full, uint64_t word, size_t len);
  // Whether the current buffer has been filled past its end. mutex_ held.
  bool currentIsFull() const;
  // Puts a fresh buffer in place of the current one and queues the old one
  // for the backend, then applies the overflow rule. False, with nothing
  // changed, when no fresh buffer can be had. mutex_ held.
  bool retireCurrent();
  // Applies the overflow rule after a buffer was queued. mutex_ held.
  void dropExcess();
  // Sets recordedLinesWanted_ from the buffers waiting and in flight. mutex_ held.
  void updateRecordedLineGate();
  // Counts lines dropped, to be reported (and in the store). mutex_ held.
  void countDropped(uint64_t buffers, uint64_t messages);
  Buffer* takeSpare();  // nullptr if none can be mapped. mutex_ held
  // The first slot no buffer uses (kMaxBuffers if none). mutex_ held.
  size_t freeSlot() const;
  // A new buffer in a free slot, with memory (nullptr if none). mutex_ held.
  Buffer* install();
  // Maps spares ahead of need, outside the lock. Backend thread; mutex_ held on entry and exit.
  void prepareSpares(std::unique_lock<std::mutex>& lock);
  // A written or dropped buffer becomes a spare. mutex_ held.
  void recycle(Buffer* b);
  // Gives back the memory of the spares beyond kMaxSpares. mutex_ held.
  void trimSpares();
  // Gives back one buffer's memory and its slot. mutex_ held.
  void release(Buffer* b);
  // Retires the current buffer if it holds anything, moves the queue into
  // `batch` and takes the drop counts not yet reported. mutex_ held.
  Dropped takeBatch(std::vector<Buffer*>& batch);
  // Writes the batch, recycling each buffer (mutex_ taken briefly) as soon
  // as it is written. Backend thread, or the destructor once it is gone.
  void writeBatch(const std::vector<Buffer*>& batch, Dropped dropped);
  // Lines written as text, to the forwards (if any).
  void forwardLines(const char* lines, size_t len);
  // After the backend is gone: writes what is left, in the calling thread.
  void writeLeftovers();
  // The buffers' store: the spool in crash-safe mode (made after dead
  // processes' spools are recovered into output_), else memory, which is
  // also what a spool that cannot be made falls back to.
  std::unique_ptr<BufferStore> openStore(bool crashSafe);

  const int flushInterval_;
  const OverflowPolicy policy_;
  const std::function<void()> afterWrite_;  // Options::afterWrite

  // The reserve word: the current buffer's slot in the top 8 bits, the
  // messages reserved in it in the next 20 (only with a store that keeps an
  // index: each message's entry), the bytes reserved in the low 36. One
  // fetch_add both picks the current buffer and reserves space in it, so a
  // reservation can never land in a buffer that was already swapped out.
  alignas(64) std::atomic<uint64_t> reserve_;
  // The store's entrySize(), read once: the index bytes each message takes
  // (0: no index, and the message field stays 0).
  uint64_t entrySize_ = 0;
  alignas(64) mutable std::mutex mutex_;
  std::condition_variable backendCond_;   // a buffer is queued, a flush asked, or stop
  std::condition_variable producerCond_;  // room in the queue, a flush done, backend up
  // All below guarded by mutex_, except where said.
  Buffer* slots_[kMaxBuffers] = {};       // written before the reserve word that names the slot is published
  std::vector<Buffer*> queued_;           // full, oldest first, waiting for the backend
  std::vector<Buffer*> spares_;           // written out, ready to be current again
  size_t inFlight_ = 0;                   // taken by the backend, not yet written
  State state_ = State::kIdle;
  uint64_t flushRequested_ = 0;
  uint64_t flushDone_ = 0;
  Dropped dropped_;      // reported in the file so far
  Dropped unreported_;   // not yet written to the file
  uint64_t producerWaits_ = 0;
  uint64_t buffersActivated_ = 0;  // the last sequence number given to a buffer
  // The buffer before the one current when the last batch was taken: once
  // the batch is written, every buffer up to it is written or was dropped.
  // Backend thread (set under mutex_).
  uint64_t batchThrough_ = 0;
  uint64_t buffersMapped_ = 0;
  uint64_t linesRecovered_ = 0;  // set in the constructor
  // Written by the backend (or stop()'s leftovers), read by stats().
  std::atomic<uint64_t> linesWritten_{0};
  bool wakeRequested_ = false;   // a producer's queue is filling up
  bool backendWaiting_ = false;  // the backend waits for work (wake() tells the producer)
  // recordedLineGate()'s flag: written under mutex_ (only when it changes),
  // read by every crash-safe statement, so on a line of its own.
  alignas(64) std::atomic<bool> recordedLinesWanted_{true};
  // Set by requestReopen(), taken by the backend. No lock.
  std::atomic<bool> reopenRequested_{false};
  static_assert(std::atomic<bool>::is_always_lock_free,
                "requestReopen() must stay async-signal-safe");

  // The log's basename: absolute in crash-safe mode (resolved against the
  // working directory at construction).
  const std::string basename_;
  // The file's counters as of the last batch: stats() must not wait for a
  // write in progress (a slow disk would stall whoever asks).
  LogFile::Stats fileStats_;
  LogFile output_;  // used by the backend thread only (and before start())
  const detail::LineEncoder& encoder_;  // the files' format's (any thread)
  // Set in the constructor. Its buffer calls are ordered as BufferStore.h
  // asks: under mutex_, or by the one thread that writes output_.
  std::unique_ptr<BufferStore> store_;
  // The per-thread record queues; none in crash-safe mode. Their consumer
  // is the backend thread (the destructor once it is gone).
  std::unique_ptr<RecordQueues> records_;
  // Crash-safe mode: a buffer holding recorded lines, formatted (by
  // whichever thread writes buffers out: the backend, or the destructor
  // once it is gone).
  std::unique_ptr<spool::Lines> formatted_;
  // The sinks forward() added; called by whichever thread writes lines.
  const std::shared_ptr<detail::LineForwards> forwards_;
  std::thread thread_;
};

}  // namespace muon
