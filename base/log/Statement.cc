#include "muon/base/internal/Statement.h"

#include <algorithm>
#include <new>

#include "muon/base/Logging.h"

namespace muon {
namespace detail {

namespace {
char g_noLaneMark;
}  // namespace
RecordLane g_noLane{nullptr, &g_noLaneMark, nullptr};

namespace {

// What a statement off the common path holds until it ends: its record
// (in `record`, or in `heap` once it outgrew it), then the Logger it may
// become. A thread's slots are a stack: a statement nested in another's
// operands takes the next one.
struct Slot {
  static constexpr size_t kRoom = RecordLane::kMaxStatement + 2 * kRecorderRoom;
  alignas(16) char record[kRoom + 8];  // a head's fourth byte past the end (kRecordRoom)
  alignas(16) char logger[sizeof(Logger)];
  char* origin = nullptr;  // the statement's: where its record began
  StatementTime began{};   // when it began (the header's key is the counter)
  char* heap = nullptr;    // its record, once it outgrew `record`
  bool hasLogger = false;
  bool temporary = false;  // made for one statement (deep nesting, thread exit)
  bool crowded = false;    // its queue was crowded when it began (beginSlow)
};

constexpr unsigned kKeptSlots = 8;

// Plain data, so that it outlives every thread_local destructor; Reaper
// frees the kept slots when the thread ends.
struct SlotStack {
  Slot* kept[kKeptSlots];
  Slot* inUse[64];
  unsigned depth;
  bool reaped;
};
thread_local SlotStack t_slots;

struct Reaper {
  ~Reaper() {
    for (Slot*& slot : t_slots.kept) {
      delete slot;
      slot = nullptr;
    }
    t_slots.reaped = true;
  }
};
thread_local Reaper t_reaper;

// Without memory for a slot a statement cannot be recorded or formatted:
// the process ends, as it would on the next allocation.
Slot* newSlot() {
  Slot* slot = new (std::nothrow) Slot;
  if (slot == nullptr) std::abort();
  return slot;
}

// The slot for a statement at `depth` that has none kept yet: one kept
// from now on, or one made for it alone once the thread's kept slots are
// gone (its thread_local destructors ran) or past kKeptSlots deep.
__attribute__((noinline)) Slot* newSlotAt(unsigned depth) {
  SlotStack& stack = t_slots;
  if (depth >= 64) std::abort();  // 64 statements nested in one another's operands
  if (depth < kKeptSlots && !stack.reaped) {
    static_cast<void>(&t_reaper);  // constructed, so that it runs at the thread's end
    stack.kept[depth] = newSlot();
    return stack.kept[depth];
  }
  Slot* slot = newSlot();
  slot->temporary = true;
  return slot;
}

// The slot kept for the next statement, if there is one (nullptr: none
// kept yet, or too deep).
inline Slot* keptSlot() {
  const unsigned depth = t_slots.depth;
  return depth < kKeptSlots ? t_slots.kept[depth] : nullptr;
}

// Gives `slot` to the statement whose record began at `origin` (nullptr:
// at the slot's own record): the thread's next slot.
inline Slot* pushSlot(Slot* slot, char* origin) {
  SlotStack& stack = t_slots;
  slot->origin = origin != nullptr ? origin : slot->record;
  slot->crowded = false;
  stack.inUse[stack.depth] = slot;
  ++stack.depth;
  return slot;
}

// The thread's next slot: a kept one (the reaper clears them), inline, or
// a new one.
inline Slot* nextSlot() {
  Slot* slot = keptSlot();
  if (__builtin_expect(slot == nullptr, 0)) slot = newSlotAt(t_slots.depth);
  return slot;
}

// A slot for the statement whose record began at `origin` (nullptr: at
// the slot's own record).
inline Slot* acquireSlot(char* origin) { return pushSlot(nextSlot(), origin); }

// The slot of the statement whose record began at `origin`, if it has one:
// the top one (statements nested in its operands have ended theirs).
Slot* slotOf(char* origin) {
  const SlotStack& stack = t_slots;
  if (stack.depth == 0) return nullptr;
  Slot* top = stack.inUse[stack.depth - 1];
  return top->origin == origin ? top : nullptr;
}

inline void releaseTopSlot() {
  Slot* slot = t_slots.inUse[--t_slots.depth];
  if (__builtin_expect(slot->heap != nullptr, 0)) {
    delete[] slot->heap;
    slot->heap = nullptr;
  }
  slot->hasLogger = false;
  slot->origin = nullptr;
  if (__builtin_expect(slot->temporary, 0)) delete slot;
}

// Leaves the lane the statement opened at `start`: nothing of it is written.
void leaveLane(char* start) {
  // The route does not change while its lane is open (resolveThreadRoute).
  RecordLane* lane = t_route.lane;
  if (lane->busy()) lane->queue->closeLane(start);
}

// The slot holding the record now at `start`, if one does: the top one
// (statements nested in its operands have ended theirs, or left the lane if
// they threw: abandon). Else the record is where it began, in place in the
// lane.
Slot* slotHolding(const char* start) {
  const SlotStack& stack = t_slots;
  if (stack.depth == 0) return nullptr;
  Slot* top = stack.inUse[stack.depth - 1];
  return start == top->record || start == top->heap ? top : nullptr;
}

// The site of the statement whose record is at `start` (its header's).
const LogSite& siteOf(const char* start) {
  const LogSite* site;
  std::memcpy(&site, start + offsetof(RecordHeader, site), sizeof site);
  return *site;
}

// When the statement in `slot`, its record now at `start`, began: as
// beginSlow noted it, or, if it began in the lane, where the counter is the
// clock, its record's key.
void noteBegan(Slot* slot, const char* start) {
  if (slot->origin != slot->record) {
    std::memcpy(&slot->began.count, start + offsetof(RecordHeader, key), sizeof slot->began.count);
    slot->began.time = Timestamp();
  }
}

// Begins a statement's record in `slot`, the thread's next, with the time
// it began (`time`: unset where the counter is the clock) and whether its
// queue was crowded.
inline RecordStart beginInSlot(Slot* slot, const LogSite* site, uint64_t count, Timestamp time,
                               bool crowded) {
  pushSlot(slot, nullptr);
  slot->crowded = crowded;
  slot->began.count = count;
  slot->began.time = time;
  std::memcpy(slot->record + offsetof(RecordHeader, key), &count, sizeof count);
  std::memcpy(slot->record + offsetof(RecordHeader, site), &site, sizeof site);
  return {slot->record, &g_noLane};
}

}  // namespace

unsigned statementSlotsInUse() { return t_slots.depth; }

RecordStart Statement::beginSlow(const LogSite* site, int level) noexcept {
  // A thread that stays in the shared mode where its ring has no room to
  // record in place (the route is current and has a lane, so the counter
  // is the clock). Kept apart from the other cases, so that it saves no
  // registers for them.
  const ThreadRoute& route = t_route;
  if (__builtin_expect(route.generation == g_routeGeneration.load(std::memory_order_relaxed), 1)) {
    RecordLane* const open = route.lanes[level];
    if (open != &g_noLane && !open->busy() && open->queue->shared() &&
        open->queue->sharedGoesOn()) {
      // Without a kept slot, beginAnew makes one (and finds the same).
      if (Slot* slot = keptSlot()) {
        return beginInSlot(slot, site, TscClock::readCounter(), Timestamp(), true);
      }
    }
  }
  return beginAnew(site, level);
}

RecordStart Statement::beginAnew(const LogSite* site, int level) noexcept {
  ThreadRoute& route = t_route;
  if (route.generation != g_routeGeneration.load(std::memory_order_relaxed)) {
    resolveThreadRoute();
    RecordLane* lane = route.lanes[level];
    char* start = lane->write;
    if (openLane(lane, start, site)) return {start, lane};
  }
  // The statement's time, before the look below (which may wake the
  // consumer, taking its mutex).
  const uint64_t count = TscClock::readCounter();
  // The lane at its limit: a fresh look at the consumer, or the next lap,
  // usually lets the record start in place after all. A crowded queue
  // sends the statement to text, which it then makes without looking again.
  RecordLane* const open = route.lanes[level];
  bool crowded = false;
  if (open != &g_noLane && !open->busy()) {
    crowded = open->queue->crowded();
    if (!crowded && open->queue->reopenLane()) {
      char* start = open->write;
      if (openLane(open, start, site)) return {start, open};
    }
  }
  // A statement inside another's operands while that one writes in place:
  // the outer one then ends by the slow path too, after this one
  // (RecordQueue's shared mode keeps the order).
  RecordLane* lane = route.lane;
  if (lane != nullptr && lane->busy()) lane->queue->disturbLane();
  // A lane on a current route means the counter is the clock (resolveThreadRoute).
  const bool counting =
      (open != &g_noLane && route.generation == g_routeGeneration.load(std::memory_order_relaxed)) ||
      clockIsTheCounter();
  return beginInSlot(nextSlot(), site, count, counting ? Timestamp() : Logger::now(), crowded);
}

RecordPlace Statement::moveToScratch(char* start, size_t used, size_t size) noexcept {
  Slot* slot = slotHolding(start);
  const bool inLane = slot == nullptr;
  if (inLane) slot = acquireSlot(start);
  const size_t need = used + size + kRecorderRoom;
  // A record begun in the slot was given kRecordRoom of its room: it may
  // stay where it is.
  if (need <= Slot::kRoom && start == slot->record) return {start, Slot::kRoom, &g_noLane};
  char* to;
  size_t room;
  if (need <= Slot::kRoom) {
    to = slot->record;
    room = Slot::kRoom;
  } else {
    room = std::max(need, 2 * used);
    to = new (std::nothrow) char[room + 8];  // a head's fourth byte past the end (kRecordRoom)
    if (to == nullptr) std::abort();
  }
  std::memcpy(to, start, used);
  if (inLane) leaveLane(start);
  if (to != slot->record) {
    delete[] slot->heap;
    slot->heap = to;
  }
  return {to, room, &g_noLane};
}

LogStream& Statement::becomeLogger(int level, char* start, size_t used) noexcept {
  Slot* slot = slotHolding(start);
  const bool inLane = slot == nullptr;
  if (inLane) {
    slot = acquireSlot(start);
    // Out of the ring first: the Logger may take the ring.
    std::memcpy(slot->record, start, used);
    leaveLane(start);
    start = slot->record;
  }
  noteBegan(slot, start);
  Logger* logger =
      new (slot->logger) Logger(siteOf(start), static_cast<Logger::LogLevel>(level), slot->began);
  slot->hasLogger = true;
  replayOperands(start + sizeof(RecordHeader), used - sizeof(RecordHeader), logger->stream());
  delete[] slot->heap;
  slot->heap = nullptr;
  return logger->stream();
}

void Statement::endLogger(char* origin) noexcept {
  Slot* slot = slotOf(origin);
  if (slot == nullptr) return;
  if (slot->hasLogger) std::launder(reinterpret_cast<Logger*>(slot->logger))->~Logger();
  releaseTopSlot();
}

// Ends a statement that recorded in place while its thread makes its own
// lines (its lane `formatting`: the queue crowded, or in the shared mode),
// its record unpublished at `start`: the lane closes, and then, as
// beginSlow's look would have had it, the queue is still crowded (or the
// shared mode goes on) and the line is made from the record, or it is not
// and the record is published where it is. False where neither was done:
// the statement goes on as a Logger.
__attribute__((always_inline)) inline bool Statement::commitFormatting(RecordLane* lane, int level,
                                                                    char* start,
                                                                    size_t used) noexcept {
  RecordQueue* queue = lane->queue;
  // Closed: nothing was published, so its place and its limit stand.
  lane->write = start;
  // crowded() takes the same first look at the shared mode; inline here,
  // a thread that stays shared makes no call for it.
  if ((queue->shared() && queue->sharedGoesOn()) || queue->crowded()) {
    StatementTime began;
    std::memcpy(&began.count, start + offsetof(RecordHeader, key), sizeof began.count);
    return Logger::writeStatementText(siteOf(start), static_cast<Logger::LogLevel>(level), began,
                                      start + sizeof(RecordHeader), used - sizeof(RecordHeader),
                                      true);
  }
  if (lane->write != start || start > lane->limit) return false;
  publishRecord(lane, start, used, level);
  return true;
}

void Statement::commitSlow(int level, char* start, size_t used) noexcept {
  // With every operand recorded, where its Logger would only make text and
  // write it, the line is made from the record as it is: in place in the
  // lane while the thread makes its own lines, or out of the lane.
  Slot* slot = slotHolding(start);
  if (slot == nullptr) {
    RecordLane* lane = t_route.lane;  // the statement's (the route stays while it is open)
    if (lane->formatting() && commitFormatting(lane, level, start, used)) return;
  } else if (!slot->hasLogger) {
    noteBegan(slot, start);
    if (Logger::writeStatementText(siteOf(start), static_cast<Logger::LogLevel>(level), slot->began,
                                   start + sizeof(RecordHeader), used - sizeof(RecordHeader),
                                   slot->crowded)) {
      releaseTopSlot();
      return;
    }
  }
  becomeLogger(level, start, used);
  endLogger(t_slots.inUse[t_slots.depth - 1]->origin);  // the slot becomeLogger left on top
}

void Statement::abandon(char* origin) noexcept {
  // An operand threw: what the statement recorded is dropped (where it
  // ended is not known); a Logger it became writes its line as far as it got.
  // A statement still writing in place holds the lane and no slot. Its
  // origin, a place in the ring, may also be the origin of an outer
  // statement whose record left the ring for a slot (the lane reopened
  // there): so the lane decides, not the slots.
  RecordLane* lane = t_route.lane;
  if (lane != nullptr && lane->busy() && lane->queue->holds(origin)) {
    leaveLane(origin);
    return;
  }
  endLogger(origin);
}

}  // namespace detail
}  // namespace muon
