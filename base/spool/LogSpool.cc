#include "muon/base/LogSpool.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "muon/base/LogFile.h"
#include "muon/base/Logging.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace muon {

namespace {

std::string systemError(const std::string& what, const std::string& path, int savedErrno) {
  return what + " '" + path + "': " + strerror_tl(savedErrno);
}

uint64_t randomKey() {
  uint64_t key = 0;
  if (::getrandom(&key, sizeof key, 0) != static_cast<ssize_t>(sizeof key)) {
    // No entropy source: still unpredictable enough to tell entries from
    // stale data, which is all the key is for when the attacker cannot read
    // the spool.
    key = static_cast<uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ull ^
          reinterpret_cast<uintptr_t>(&key);
  }
  return key;
}

}  // namespace

std::unique_ptr<LogSpool> LogSpool::create(const std::string& basename, size_t slots,
                                           size_t bufferSize, std::string* error) {
  const long pid = ::getpid();
  // Not a name recovery looks at, until publish(): a half-made spool must
  // never be taken for a dead one.
  std::string path = spool::unpublishedName(basename, pid);
  int fd = -1;
  int lockError = 0;
  // A recovery removing abandoned .new files (muon-recover, or another
  // process of this basename starting) may open ours before we lock it and
  // unlink it after: then it is made again. Such a recovery holds the lock
  // only for an instant, so a few tries are plenty.
  for (int attempt = 0; attempt < 5 && fd < 0; ++attempt) {
    ::unlink(path.c_str());  // ours by name (our pid); left by a process killed while creating
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      *error = systemError("cannot create spool", path, errno);
      return nullptr;
    }
    lockError = ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
    if (lockError == EWOULDBLOCK || (lockError == 0 && !pathNamesFile(path, fd))) {
      ::close(fd);
      fd = -1;
    }
  }
  if (fd < 0) {
    *error = "cannot create spool '" + path + "': removed by another process as it was made";
    return nullptr;
  }
  size_t mapSize = spool::spoolSize(slots, bufferSize);
  void* map = MAP_FAILED;
  if (lockError != 0) {
    *error = systemError("cannot lock spool", path, lockError);
  } else if (::ftruncate(fd, static_cast<off_t>(mapSize)) != 0) {
    *error = systemError("cannot size spool", path, errno);
  } else {
    map = ::mmap(nullptr, mapSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) *error = systemError("cannot map spool", path, errno);
  }
  if (map == MAP_FAILED) {
    ::unlink(path.c_str());
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<LogSpool> s(
      new LogSpool(path, fd, static_cast<char*>(map), mapSize, slots, bufferSize));
  s->basename_ = basename;
  s->key_ = randomKey();
  // The header pages are written once here, so a page fault on them can
  // happen only now (page 0 again at a drop: rare, and under the lock).
  // ftruncate made them zero: every slot starts kFree, nothing dropped.
  spool::Header* header = s->header();
  std::memcpy(header->magic, spool::kMagic, sizeof header->magic);
  header->version = spool::kVersion;
  header->slotCount = static_cast<uint32_t>(slots);
  header->bufferSize = bufferSize;
  header->key = s->key_;
  header->pid = static_cast<uint64_t>(pid);
  for (size_t i = 0; i < slots; ++i) s->slotHeader(i)->generation = 0;
  return s;
}

LogSpool::Opened LogSpool::open(const std::string& basename, size_t slots, size_t bufferSize,
                                LogFile* output) {
  Opened opened;
  opened.spool = create(basename, slots, bufferSize, &opened.error);
  // Dead processes' lines go first, before any of ours (there are none yet:
  // the spool is not published, and its owner logs nothing before it is).
  opened.recovered = recoverDeadSpools(basename, output);
  if (opened.spool && !opened.spool->publish(&opened.error)) opened.spool.reset();
  return opened;
}

LogSpool::LogSpool(std::string path, int fd, char* map, size_t mapSize, size_t slots,
                   size_t bufferSize)
    : BufferStore(spool::kEntrySize, true),
      path_(std::move(path)),
      fd_(fd),
      map_(map),
      mapSize_(mapSize),
      slots_(slots),
      bufferSize_(bufferSize),
      buffers_(map + spool::buffersOffset(slots)) {}

LogSpool::~LogSpool() {
  const spool::Header* h = header();
  bool empty = __atomic_load_n(&h->reportState, __ATOMIC_ACQUIRE) == spool::kFree &&
               h->droppedMessages == h->reportedMessages;
  for (size_t i = 0; i < slots_; ++i) {
    if (__atomic_load_n(&slotHeader(i)->state, __ATOMIC_ACQUIRE) != spool::kFree) empty = false;
  }
  // Unlink before unlocking: no recovery can open it in between.
  if (empty) ::unlink(path_.c_str());
  ::munmap(map_, mapSize_);
  ::close(fd_);
}

bool LogSpool::publish(std::string* error) {
  const long pid = ::getpid();
  for (int sequence = 0; sequence < 100; ++sequence) {
    std::string name = spool::fileName(basename_, pid, sequence);
    // RENAME_NOREPLACE: a spool by that name belongs to a process of the
    // same pid elsewhere (another PID namespace sharing the directory), or
    // to a dead process not yet recovered; neither may be replaced.
    if (::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, name.c_str(), RENAME_NOREPLACE) == 0) {
      path_ = name;
      return true;
    }
    if (errno != EEXIST) {
      *error = systemError("cannot rename spool to", name, errno);
      return false;
    }
  }
  *error = "no free spool name for " + spool::fileName(basename_, pid);
  return false;
}

char* LogSpool::memoryFor(size_t i) {
  // A file page that is clean or not yet in memory faults on the first
  // store to it (a read-only mapping for dirty tracking); a buffer's 1024
  // such faults would land on producers, one line in ~37. Populating for
  // write takes them here instead. Older kernels: touch each page.
  if (::madvise(data(i), bufferSize_, MADV_POPULATE_WRITE) != 0) {
    for (size_t off = 0; off < bufferSize_; off += spool::kPageSize) {
      volatile char* p = data(i) + off;
      *p = *p;
    }
  }
  return data(i);
}

void LogSpool::release(size_t i, char*) {
  // Unmaps the pages (as munmap does for the default mode's buffers); they
  // stay in the page cache, reclaimable once written back, and their disk
  // blocks stay allocated for the next burst. Punching them out instead
  // costs milliseconds here, and the buffer's next use would pay again.
  ::madvise(data(i), bufferSize_, MADV_DONTNEED);
}

uint64_t LogSpool::activate(size_t i) {
  spool::Slot* s = slotHeader(i);
  uint64_t generation = s->generation + 1;
  s->generation = generation;
  s->sequence = nextSequence_++;
  __atomic_store_n(&s->state, uint64_t{spool::kActive}, __ATOMIC_RELEASE);
  return spool::sealFor(key_, generation);
}

WriteResult LogSpool::write(size_t i, const char* lines, size_t len, LogFile* file) {
  // Recovery cuts the file back to this position if we die before the
  // slot is free, and writes the buffer again: once, either way.
  spool::markWriting(slotHeader(i), file->nextPosition());
  WriteResult r = file->appendEncoded(lines, len);
  spool::markFree(slotHeader(i));
  return r;
}

void LogSpool::countDropped(uint64_t buffers, uint64_t messages) {
  spool::Header* h = header();
  __atomic_store_n(&h->droppedBuffers, h->droppedBuffers + buffers, __ATOMIC_RELAXED);
  __atomic_store_n(&h->droppedMessages, h->droppedMessages + messages, __ATOMIC_RELEASE);
}

WriteResult LogSpool::writeReport(const char* report, size_t len, uint64_t buffers,
                                  uint64_t messages, LogFile* file) {
  // A report we die in the middle of is cut out and written by the
  // recovery, as a buffer is.
  spool::beginReport(header(), file->nextPosition());
  WriteResult r = file->append(report, len);
  spool::endReport(header(), buffers, messages);
  return r;
}

}  // namespace muon
