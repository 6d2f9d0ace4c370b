// LogFields: muon::kv fields and LogContext in text lines, and the logfmt
// encoding read back by the parser (Logfmt.h) byte for byte.
#include "muon/base/LogFields.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "muon/base/internal/LogOperands.h"
#include "muon/base/Logfmt.h"
#include "muon/base/Logging.h"

namespace muon {
namespace {

// Lines a statement hands to the output function, this thread's only.
std::mutex g_mutex;
std::vector<std::string> g_lines;
void capture(const char* line, size_t len) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_lines.emplace_back(line, len);
}

class LogFieldsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_lines.clear();
    Logger::setOutput(&capture);
  }
  void TearDown() override { Logger::setOutput(nullptr); }
  // The message part of the only line logged: between the level and the trailer.
  static std::string message() {
    std::lock_guard<std::mutex> lock(g_mutex);
    EXPECT_EQ(g_lines.size(), 1u);
    if (g_lines.empty()) return "";
    const std::string& line = g_lines.back();
    const size_t begin = line.find("INFO  ") + 6;
    const size_t end = line.rfind(" - ");
    return line.substr(begin, end - begin);
  }
};

// The fields readLogfmtFields finds in `message`, values unescaped.
std::vector<std::pair<std::string, std::string>> fieldsOf(const std::string& message,
                                                          size_t* start = nullptr) {
  std::vector<std::pair<std::string, std::string>> out;
  const size_t s = detail::readLogfmtFields(message, [&](const detail::LogfmtField& f) {
    std::string v;
    detail::appendLogfmtValue(f, &v);
    out.emplace_back(std::string(f.name), v);
  });
  if (start != nullptr) *start = s;
  return out;
}

TEST_F(LogFieldsTest, FieldsFollowTheMessageAsLogfmt) {
  const std::string name = "alice";
  LOG_INFO << "login" << kv("user", name) << kv("ms", 12) << kv("ok", true) << kv("ratio", 0.5);
  EXPECT_EQ(message(), "login user=alice ms=12 ok=true ratio=0.5");
}

TEST_F(LogFieldsTest, ValuesThatNeedItAreQuotedAndEscaped) {
  LOG_INFO << "m" << kv("a", "two words") << kv("b", "") << kv("c", "say \"hi\"")
           << kv("d", "a=b") << kv("e", "back\\slash") << kv("f", "line\nbreak\x1b");
  EXPECT_EQ(message(),
            "m a=\"two words\" b=\"\" c=\"say \\\"hi\\\"\" d=\"a=b\" e=\"back\\\\slash\" "
            "f=\"line\\nbreak\\u001b\"");
}

TEST_F(LogFieldsTest, StringsThatReadAsNumbersOrBoolsAreQuoted) {
  LOG_INFO << "m" << kv("id", std::string("12")) << kv("t", "true") << kv("n", 12)
           << kv("x", "12ab") << kv("c", 'x');
  EXPECT_EQ(message(), "m id=\"12\" t=\"true\" n=12 x=12ab c=x");
}

TEST_F(LogFieldsTest, BadNamesAreMadeSafe) {
  LOG_INFO << "m" << kv("a b", 1) << kv("", 2) << kv("x=\"y\n", 3) << kv(std::string(100, 'n'), 4);
  EXPECT_EQ(message(), "m a_b=1 _=2 x__y_=3 " + std::string(detail::kMaxFieldName, 'n') + "=4");
}

TEST_F(LogFieldsTest, ValuesRoundTripThroughTheParser) {
  const std::vector<std::string> values = {
      "plain", "", " ", "\"", "\\", "=", "a b=c\"d\\e", std::string("nul\0byte", 8),
      "\x01\x1f\x7f\t\r\n", "\xff\xfe invalid", "12", "-1.5e+3", "true", "false", "nan",
      "caf\xc3\xa9", std::string(300, 'x')};
  for (const std::string& v : values) {
    g_lines.clear();
    LOG_INFO << "msg" << kv("k", v) << kv("n", 7);
    const std::string m = message();
    size_t start;
    const auto fields = fieldsOf(m, &start);
    ASSERT_EQ(fields.size(), 2u) << m;
    EXPECT_EQ(m.substr(0, start), "msg ");
    EXPECT_EQ(fields[0].first, "k");
    EXPECT_EQ(fields[0].second, v) << m;
    EXPECT_EQ(fields[1].second, "7");
  }
}

TEST_F(LogFieldsTest, AValueTooLongForTheLineIsCutAndStillClosed) {
  const std::string big(1 << 20, '"');
  LOG_INFO << "m" << kv("big", big);
  std::string line;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    ASSERT_EQ(g_lines.size(), 1u);
    line = g_lines[0];
  }
  EXPECT_LE(line.size(), LogStream::kBufferSize);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const std::string m = message();
  const auto fields = fieldsOf(m);
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_GT(fields[0].second.size(), 1000u);
  EXPECT_EQ(fields[0].second, std::string(fields[0].second.size(), '"'));
  EXPECT_EQ(fields[1].first, "log.truncated");  // the cut marker
  EXPECT_EQ(fields[1].second, "true");
}

TEST_F(LogFieldsTest, ContextFieldsGoOnEveryLineAndNestedScopesRestore) {
  {
    LogContext outer{{"request_id", "r1"}, {"n", 5}};
    LOG_INFO << "a";
    EXPECT_EQ(message(), "a request_id=r1 n=5");
    {
      LogContext inner{{"n", 6}, {"step", "two words"}};
      g_lines.clear();
      LOG_INFO << "b" << kv("own", 1);
      EXPECT_EQ(message(), "b own=1 request_id=r1 n=6 step=\"two words\"");
    }
    g_lines.clear();
    LOG_INFO << "c";
    EXPECT_EQ(message(), "c request_id=r1 n=5");
  }
  g_lines.clear();
  LOG_INFO << "d";
  EXPECT_EQ(message(), "d");
}

TEST_F(LogFieldsTest, AContextBelongsToItsThread) {
  LogContext here{{"who", "main"}};
  std::thread([] { LOG_INFO << "other"; }).join();
  EXPECT_EQ(message(), "other");
}

// A value kv writes with more than one operand.
struct Pair {
  int a;
  int b;
};
LogStream& operator<<(LogStream& s, const Pair& p) { return s << p.a << ':' << p.b; }

// Fields of every kind of value and name, as one statement writes them.
void writeFields(LogStream& s) {
  const std::string dirty = "a b";
  const char* cstr = "c s";
  char array[8] = "arr";
  s << "m" << kv("i", 12) << kv("neg", -7LL) << kv("u", 7u) << kv("d", 0.5)
    << kv("f", 1.5f) << kv("nan", std::nan("")) << kv("t", true) << kv("no", false)
    << kv("c", 'x') << kv("sp", ' ') << kv("s", std::string("two words"))
    << kv("sv", std::string_view("12")) << kv("cs", cstr) << kv("lit", "q\"") << kv("arr", array)
    << kv("fmt", Fmt("%d %s", 3, "x")) << kv(dirty, 1) << kv("x=y", "v") << kv("", "")
    << kv(std::string(70, 'n'), 1) << kv("pair", Pair{1, 2}) << kv("e", std::string());
  // Names known clean, as kv makes them for a literal when the compiler
  // folds its check (these tests are built without that optimization).
  const std::string two = "a b";
  s << KeyValue<int>{"cn", 3, true} << KeyValue<std::string>{"cs2", two, true}
    << KeyValue<Pair>{"cp", Pair{4, 5}, true};
}

std::string textOf(void (*write)(LogStream&)) {
  LogStream s;
  write(s);
  s.closeFields();
  return std::string(s.buffer().toStringView());
}

TEST(LogFieldsRecorded, ReplayedFieldsAreTheTextLinesBytes) {
  const std::string text = textOf(&writeFields);
  EXPECT_NE(text.find(" i=12 neg=-7 u=7 d=0.5 f=1.5 nan=nan t=true no=false c=x sp=\" \" "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" cn=3 cs2=\"a b\" cp=4:5"), std::string::npos) << text;
  LogStream recorded;
  recorded.startRecording(nullptr, nullptr);
  writeFields(recorded);
  ASSERT_TRUE(recorded.recording());
  LogStream replayed;
  ASSERT_TRUE(detail::replayOperands(recorded.buffer().data(), recorded.buffer().length(),
                                     replayed));
  replayed.closeFields();
  EXPECT_EQ(replayed.buffer().toStringView(), text);
}

TEST(LogFieldsRecorded, ARecordThatFallsBackAnywhereGivesTheSameText) {
  const std::string text = textOf(&writeFields);
  LogStream full;
  full.startRecording(nullptr, nullptr);
  writeFields(full);
  // Room for every prefix of the record: the stream falls back to text at
  // each operand, a field's start and its value included. The room is
  // taken by operands that write (almost) nothing: empty pieces of three
  // bytes each, and up to two chars of two.
  for (size_t room = 0; room <= full.buffer().length(); ++room) {
    const size_t taken = LogStream::kMessageEnd - room;
    const size_t chars = taken % 3 == 0 ? 0 : (taken % 3 == 2 ? 1 : 2);
    LogStream s;
    s.startRecording(nullptr, nullptr);
    for (size_t i = 0; i < chars; ++i) s << 'p';
    for (size_t i = 0; i < (taken - 2 * chars) / 3; ++i) s.append("", 0);
    ASSERT_EQ(s.buffer().avail(), room);
    writeFields(s);
    s.closeFields();
    if (s.recording()) {
      EXPECT_EQ(room, full.buffer().length());
      continue;
    }
    EXPECT_EQ(s.buffer().toStringView(), std::string(chars, 'p') + text) << "room " << room;
  }
}

// Records as the build before the one-operand tags wrote them (a spool of
// it): a field's start, its value and its end record.
void writeFieldsThreeRecords(LogStream& s) {
  s << "m";
  s.beginField("n", false);
  s << 12;
  s.endField();
  s.beginField("s", true);
  s << std::string("two words");
  s.endField();
  s.beginField("t", false);
  s.append("true", 4);
  s.endField();
}
void writeFieldsOneRecord(LogStream& s) {
  s << "m" << kv("n", 12) << kv("s", std::string("two words")) << kv("t", true);
}

TEST(LogFieldsRecorded, RecordsOfTheEarlierFormStillReplay) {
  LogStream old;
  old.startRecording(nullptr, nullptr);
  writeFieldsThreeRecords(old);
  LogStream replayed;
  ASSERT_TRUE(detail::replayOperands(old.buffer().data(), old.buffer().length(), replayed));
  replayed.closeFields();
  EXPECT_EQ(replayed.buffer().toStringView(), "m n=12 s=\"two words\" t=true");
  EXPECT_EQ(replayed.buffer().toStringView(), textOf(&writeFieldsOneRecord));
  LogStream now;
  now.startRecording(nullptr, nullptr);
  writeFieldsOneRecord(now);
  EXPECT_LT(now.buffer().length(), old.buffer().length());  // one record less a field
}

TEST_F(LogFieldsTest, AContextFieldNearTheLinesEndIsTheFieldAStatementWrites) {
  // Up to the end of the line: the context's field, made once, is the one
  // kv writes there, cut and closed alike.
  for (size_t n = 3700; n < LogStream::kBufferSize; n += 7) {
    const std::string message(n, 'x');
    {
      LogContext ctx{{"q", "a b"}, {"n", 5}};
      LOG_INFO << message;
    }
    LOG_INFO << message << kv("q", "a b") << kv("n", 5);
    std::lock_guard<std::mutex> lock(g_mutex);
    ASSERT_EQ(g_lines.size(), 2u);
    // The message: after the level, up to the trailer (its line differs).
    auto messageOf = [](const std::string& line) {
      const size_t begin = line.find("INFO  ");
      return line.substr(begin, line.rfind(" - ") - begin);
    };
    EXPECT_EQ(messageOf(g_lines[0]), messageOf(g_lines[1])) << n;
    g_lines.clear();
  }
}

TEST(LogfmtTest, TheQuickScanFindsEveryByteThatGetsAValueQuoted) {
  // Each byte at each place of values of 1 to 20 bytes, against the rule
  // byte by byte.
  for (size_t len = 1; len <= 20; ++len) {
    for (size_t at = 0; at < len; ++at) {
      for (int c = 0; c < 256; ++c) {
        std::string v(len, 'a');
        v[at] = static_cast<char>(c);
        const bool quoted = c < 0x20 || c == 0x7f || c == ' ' || c == '"' || c == '=' || c == '\\';
        if (c != '!') {  // which it may take for one
          ASSERT_EQ(detail::mayNeedQuotes(v.data(), len), quoted) << len << " " << at << " " << c;
        }
      }
    }
  }
}

TEST(LogfmtTest, MessageWordsThatAreNotFieldsStayInTheMessage) {
  size_t start;
  EXPECT_TRUE(fieldsOf("hello world", &start).empty());
  EXPECT_EQ(start, 11u);
  auto f = fieldsOf("x=1 then words a=1 b=\"q r\"", &start);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(start, 15u);
  EXPECT_EQ(f[1].second, "q r");
  EXPECT_TRUE(fieldsOf("a=1 b=\"open", &start).empty());
  EXPECT_TRUE(fieldsOf("a=1 ", &start).empty());
  f = fieldsOf("say \"hi x=1\" ok=2", &start);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].first, "ok");
}

}  // namespace
}  // namespace muon
