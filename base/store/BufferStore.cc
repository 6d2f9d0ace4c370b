#include "muon/base/internal/BufferStore.h"

#include <sys/mman.h>

#include "muon/base/LogFile.h"

namespace muon {

char* MemoryStore::memoryFor(size_t) {
  // Never memset: MAP_POPULATE has the kernel fault every page in now, so
  // that the producer that later fills the buffer takes no page faults.
  void* p = ::mmap(nullptr, bufferSize_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

void MemoryStore::release(size_t, char* memory) { ::munmap(memory, bufferSize_); }

WriteResult MemoryStore::write(size_t, const char* lines, size_t len, LogFile* file) {
  return file->appendEncoded(lines, len);
}

WriteResult MemoryStore::writeReport(const char* report, size_t len, uint64_t, uint64_t,
                                     LogFile* file) {
  return file->append(report, len);
}

}  // namespace muon
