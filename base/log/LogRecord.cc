#include "muon/base/LogRecord.h"

#include <cstdint>
#include <cstring>
#include <functional>

namespace muon {
namespace detail {

namespace {

// A stored record: this header, then the text, then whichever of file,
// function and message did not lie inside the text. Each view is kept as
// its place in the stored bytes.
struct Span {
  uint32_t offset;
  uint32_t size;
};
struct StoredHeader {
  int64_t time;
  int32_t level;
  int32_t tid;
  int32_t line;
  Span file;
  Span function;
  Span message;
  Span fields;
  Span text;
};

// Whether `part` lies inside `text` (a view of the same line), so that it
// is kept as a place in the stored text instead of bytes of its own.
bool inside(std::string_view part, std::string_view text) {
  std::less<const char*> before;
  return !before(part.data(), text.data()) &&
         !before(text.data() + text.size(), part.data() + part.size());
}

// Where each view of `record` goes; those outside the text after it.
void layout(const LogRecord& record, StoredHeader* header) {
  const std::string_view text = record.text;
  size_t end = sizeof(StoredHeader) + text.size();
  auto place = [&](std::string_view part) {
    if (inside(part, text)) {
      const auto offset = static_cast<size_t>(part.data() - text.data());
      return Span{static_cast<uint32_t>(sizeof(StoredHeader) + offset),
                  static_cast<uint32_t>(part.size())};
    }
    const Span span{static_cast<uint32_t>(end), static_cast<uint32_t>(part.size())};
    end += part.size();
    return span;
  };
  header->time = record.time.microSecondsSinceEpoch();
  header->level = record.level;
  header->tid = record.tid;
  header->line = record.line;
  header->text = Span{sizeof(StoredHeader), static_cast<uint32_t>(text.size())};
  header->file = place(record.file);
  header->function = place(record.function);
  header->message = place(record.message);
  header->fields = place(record.fields);
}

}  // namespace

size_t storedSize(const LogRecord& record) {
  size_t size = sizeof(StoredHeader) + record.text.size();
  for (std::string_view part : {record.file, record.function, record.message, record.fields}) {
    if (!inside(part, record.text)) size += part.size();
  }
  return size;
}

void storeRecord(const LogRecord& record, char* out) {
  StoredHeader header;
  layout(record, &header);
  std::memcpy(out, &header, sizeof header);
  // A record made by hand may have no text (a null view): memcpy takes none.
  if (!record.text.empty()) std::memcpy(out + sizeof header, record.text.data(), record.text.size());
  const size_t textEnd = sizeof header + record.text.size();
  auto copyOutside = [&](Span span, std::string_view part) {
    if (!part.empty() && span.offset >= textEnd) {
      std::memcpy(out + span.offset, part.data(), part.size());
    }
  };
  copyOutside(header.file, record.file);
  copyOutside(header.function, record.function);
  copyOutside(header.message, record.message);
  copyOutside(header.fields, record.fields);
}

LogRecord loadRecord(const char* stored) {
  StoredHeader header;
  std::memcpy(&header, stored, sizeof header);
  auto view = [&](Span span) { return std::string_view(stored + span.offset, span.size); };
  LogRecord record;
  record.time = Timestamp(header.time);
  record.level = static_cast<Logger::LogLevel>(header.level);
  record.tid = header.tid;
  record.file = view(header.file);
  record.line = header.line;
  record.function = view(header.function);
  record.message = view(header.message);
  record.fields = view(header.fields);
  record.text = view(header.text);
  return record;
}

}  // namespace detail
}  // namespace muon
