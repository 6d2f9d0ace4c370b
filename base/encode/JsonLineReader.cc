// readJsonLine (JsonLines.h): a JSON line of a log file back into the
// record the JSON encoder wrote it from. Only the JSON muon writes is read: an
// object of strings, numbers and bools, on one line; anything else is left
// to the caller as a line that is not muon's.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "muon/base/JsonLines.h"
#include "muon/base/internal/LineLayout.h"
#include "muon/base/Logfmt.h"
#include "muon/base/LogRecord.h"
#include "muon/base/TimeZone.h"
#include "muon/base/Timestamp.h"

namespace muon {
namespace detail {

namespace {

// RFC 8259's tokens, over one line.
class JsonCursor {
 public:
  explicit JsonCursor(std::string_view s) : s_(s) {}

  bool atEnd() {
    skipSpace();
    return i_ == s_.size();
  }
  char peek() {
    skipSpace();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }

  // A string at the cursor, its bytes unescaped and appended to `out`.
  // False if there is no valid string: one that is not UTF-8, or escapes a
  // lone surrogate, is not (muon writes neither).
  bool string(std::string* out) {
    if (!eat('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20) return false;
      if (u >= 0x80) {
        const size_t n = utf8SequenceLength(reinterpret_cast<const unsigned char*>(s_.data()) + i_ - 1,
                                            s_.size() - i_ + 1);
        if (n == 0) return false;
        out->append(s_.data() + i_ - 1, n);
        i_ += n - 1;
        continue;
      }
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      if (const char byte = unescapedByte(e)) {
        out->push_back(byte);
        continue;
      }
      if (e != 'u') return false;
      uint32_t cp;
      if (!hex4(&cp)) return false;
      if (cp >= 0xd800 && cp <= 0xdbff) {
        // A high surrogate takes a low one after it.
        uint32_t low;
        if (i_ + 1 >= s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u') return false;
        i_ += 2;
        if (!hex4(&low) || low < 0xdc00 || low > 0xdfff) return false;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      } else if (cp >= 0xdc00 && cp <= 0xdfff) {
        return false;
      }
      appendUtf8(cp, out);
    }
    return false;
  }

  // A number finite as a double, true or false at the cursor: its text,
  // which RFC 8259's grammar accepts. False if there is none (muon writes
  // 1e999 as a string).
  bool bare(std::string_view* token) {
    skipSpace();
    const size_t from = i_;
    while (i_ < s_.size() && isBareByte(s_[i_])) ++i_;
    *token = s_.substr(from, i_ - from);
    if (token->empty() || !readsAsNumberOrBool(*token)) return false;
    if (token->find_first_of("eE") == std::string_view::npos) return true;
    const std::string number(*token);
    return std::isfinite(std::strtod(number.c_str(), nullptr));
  }

 private:
  static bool isBareByte(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' ||
           c == '.' || c == 'E';
  }
  bool hex4(uint32_t* cp) {
    if (i_ + 4 > s_.size()) return false;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = hexValue(s_[i_ + static_cast<size_t>(k)]);
      if (h < 0) return false;
      v = v << 4 | static_cast<uint32_t>(h);
    }
    i_ += 4;
    *cp = v;
    return true;
  }
  void skipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n')) {
      ++i_;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

// A non-negative integer that fits an int, as the tid and the line are.
bool readCount(std::string_view token, int* out) {
  if (token.empty() || token.size() > 9) return false;
  int v = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// "2026-11-21T08:15:02.123456Z", as JsonWriter::timestamp writes it, read
// by the text layout's reader once its punctuation is the text line's.
bool readTimestamp(std::string_view text, Timestamp* time) {
  if (text.size() != 27 || text[4] != '-' || text[7] != '-' || text[10] != 'T' ||
      text[26] != 'Z') {
    return false;
  }
  char layout[25];  // "20261121 08:15:02.123456Z"
  std::memcpy(layout, text.data(), 4);
  std::memcpy(layout + 4, text.data() + 5, 2);
  std::memcpy(layout + 6, text.data() + 8, 2);
  layout[8] = ' ';
  std::memcpy(layout + 9, text.data() + 11, 16);
  static const TimeZone utc;
  return readDateTime(std::string_view(layout, sizeof layout), utc, time) == sizeof layout;
}

bool levelOf(std::string_view name, int* level) {
  for (int l = 0; l < kLevelCount; ++l) {
    if (name == levelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

// A member's value: where its bytes are in the scratch string, and whether
// it was a JSON string (text) or a bare number or bool.
struct Span {
  size_t at = 0;
  size_t size = 0;
  bool text = false;
  bool present = false;
};
struct KeyValue {
  Span name;
  Span value;
};

}  // namespace

JsonLineKind readJsonLine(std::string_view line, std::string* storage, LogRecord* record) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  JsonCursor in(line);
  if (!in.eat('{')) return JsonLineKind::kOther;
  // Pass one: every key and value, unescaped into `scratch`.
  thread_local std::string scratch;              // kept: no allocation per line
  thread_local std::vector<KeyValue> fields;   // the same
  scratch.clear();
  fields.clear();
  Span timestamp, level, tid, function, message, file, fileLine;
  Span* const reserved[] = {&timestamp, &level, &tid, &function, &message, &file, &fileLine};
  constexpr std::string_view kKeys[] = {"@timestamp",           "log.level",
                                        "process.thread.id",    "log.origin.function",
                                        "message",              "log.origin.file.name",
                                        "log.origin.file.line"};
  bool first = true;
  while (!in.eat('}')) {
    if (!first && !in.eat(',')) return JsonLineKind::kOther;
    first = false;
    Span key;
    key.at = scratch.size();
    if (!in.string(&scratch) || !in.eat(':')) return JsonLineKind::kOther;
    key.size = scratch.size() - key.at;
    Span value;
    value.at = scratch.size();
    value.present = true;
    if (in.peek() == '"') {
      if (!in.string(&scratch)) return JsonLineKind::kOther;
      value.text = true;
    } else {
      std::string_view token;
      if (!in.bare(&token)) return JsonLineKind::kOther;
      scratch.append(token);
    }
    value.size = scratch.size() - value.at;
    const std::string_view name(scratch.data() + key.at, key.size);
    Span* slot = nullptr;
    for (size_t k = 0; k < sizeof kKeys / sizeof kKeys[0]; ++k) {
      if (name == kKeys[k]) slot = reserved[k];
    }
    if (slot != nullptr) {
      if (slot->present) return JsonLineKind::kOther;
      *slot = value;
    } else {
      fields.push_back(KeyValue{key, value});
    }
  }
  if (!in.atEnd() || !message.present || !message.text) return JsonLineKind::kOther;
  auto view = [&](const Span& s) { return std::string_view(scratch.data() + s.at, s.size); };

  *record = LogRecord();
  storage->clear();
  if (!timestamp.present && !level.present && !tid.present && !function.present &&
      !file.present && !fileLine.present && fields.empty()) {
    storage->append(view(message));
    record->message = *storage;
    return JsonLineKind::kMessage;
  }

  // Pass two: the parts, checked, and the text line's message and fields.
  int levelNumber = 0;
  if (!timestamp.text || !readTimestamp(view(timestamp), &record->time) || !level.text ||
      !levelOf(view(level), &levelNumber) || !tid.present || tid.text ||
      !readCount(view(tid), &record->tid) || (function.present && !function.text) ||
      file.present != fileLine.present || (file.present && (!file.text || fileLine.text)) ||
      (fileLine.present && !readCount(view(fileLine), &record->line))) {
    return JsonLineKind::kOther;
  }
  record->level = static_cast<Logger::LogLevel>(levelNumber);
  // Offsets first: `storage` grows while it is written.
  storage->append(view(function));
  storage->append(view(file));
  const size_t messageAt = storage->size();
  storage->append(view(message));
  const size_t fieldsAt = storage->size();
  for (const KeyValue& f : fields) {
    std::string_view name = view(f.name);
    constexpr std::string_view kPrefix = "fields.";
    if (name.size() > kPrefix.size() && name.compare(0, kPrefix.size(), kPrefix) == 0 &&
        isReservedJsonKey(name.substr(kPrefix.size()))) {
      name.remove_prefix(kPrefix.size());
    }
    if (!isFieldName(name)) return JsonLineKind::kOther;
    storage->push_back(' ');
    storage->append(name);
    storage->push_back('=');
    // The value's bytes, then its logfmt form in place, as LogStream does.
    const std::string_view value = view(f.value);
    const size_t valueAt = storage->size();
    const size_t room = 2 + 6 * value.size();
    storage->append(value);
    storage->resize(valueAt + room);
    const size_t n = encodeLogfmtValue(storage->data() + valueAt, value.size(), room, f.value.text);
    storage->resize(valueAt + n);
  }
  const std::string_view all(*storage);
  record->function = all.substr(0, function.size);
  record->file = all.substr(function.size, file.size);
  record->message = all.substr(messageAt);
  record->fields = all.substr(fieldsAt);
  return JsonLineKind::kParts;
}

}  // namespace detail
}  // namespace muon
