// The statement's common path (Statement.h): a record written in place in
// the thread's queue, with the clock the program really has (the counter),
// and every way off it: a statement nested in another's operands, an operand
// that throws, a string past the record's room, an operand the recorder does
// not store, a configuration or a context that changes the route.
#include "muon/base/internal/Statement.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "EveryStatement.h"
#include "OutputCapture.h"
#include "TempDir.h"
#include "muon/base/AsyncLogging.h"
#include "muon/base/Logging.h"
#include "muon/base/TscClock.h"

using muon::AsyncLogging;
using muon::Logger;
using muon::test::readLines;
using muon::test::TempDir;

namespace {

// A line without its date and time ("20261128 08:15:02.123456Z "), which
// differ between two runs on the real clock.
std::string withoutTime(const std::string& line) {
  const size_t z = line.find("Z ");
  return z == std::string::npos ? line : line.substr(z + 2);
}

// Whether this thread's INFO statements start their records in place.
bool infoTakesTheLane() {
  const muon::detail::ThreadRoute& route = muon::detail::t_route;
  return route.lanes[Logger::INFO] != &muon::detail::g_noLane &&
         route.generation == muon::detail::g_routeGeneration.load();
}

int g_innerLines = 1;
// An operand that logs g_innerLines lines of its own.
int logsInner() {
  for (int i = 0; i < g_innerLines; ++i) LOG_INFO << "inner " << i;
  return 7;
}

int throws() { throw std::runtime_error("operand"); }

class StatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!muon::TscClock::counterAvailable()) {
      GTEST_SKIP() << "no invariant counter here (or MUON_TSC=0): every statement takes the "
                      "slow path, which the other Logging tests cover";
    }
    // The counter is the clock once calibrated: wait for that, not for a mode.
    while (!muon::TscClock::countsAreTime()) {
      static_cast<void>(Logger::now());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void TearDown() override {
    Logger::setOutput(nullptr);
    Logger::setFlushLevel(Logger::FATAL);
  }

  // The lines `body` logs to an AsyncLogging attached (with the thread
  // then on its lane if `expectLane`).
  template <typename Body>
  std::vector<std::string> deferred(Body body, bool expectLane = true) {
    {
      AsyncLogging log(dir_.file("deferred"), 1L << 30);
      auto attached = Logger::attach(log);
      log.start();
      LOG_INFO << "first";  // resolves the route, makes the queue
      EXPECT_EQ(infoTakesTheLane(), expectLane);
      body();
      EXPECT_EQ(muon::detail::statementSlotsInUse(), 0u);
    }
    std::vector<std::string> lines;
    for (const std::string& file : dir_.files()) {
      for (std::string& line : readLines(file)) lines.push_back(withoutTime(line));
      std::remove(file.c_str());
    }
    if (!lines.empty()) lines.erase(lines.begin());  // "first"
    return lines;
  }
  // The lines `body` logs as text (the statements format them).
  template <typename Body>
  std::vector<std::string> direct(Body body) {
    std::vector<std::string> lines;
    for (std::string line : muon::test::linesWrittenToOutput(body)) {
      if (!line.empty() && line.back() == '\n') line.pop_back();
      lines.push_back(withoutTime(line));
    }
    return lines;
  }

  TempDir dir_;
};

// The operand bytes `record` stores into a record of its own, each byte of
// the buffer set to `fill` first.
template <typename Record>
std::string operandBytes(Record record, char fill) {
  using muon::detail::kRecorderRoom;
  alignas(16) char buffer[4096];
  std::memset(buffer, fill, sizeof buffer);
  const size_t header = sizeof(muon::detail::RecordHeader);
  const muon::detail::Recorder<kRecorderRoom, Logger::INFO> start{buffer, header, sizeof buffer - 8,
                                                                  &muon::detail::g_noLane};
  const auto end = record(start);
  return std::string(buffer + header, end.used - header);
}

// A literal's operand is written as words of constants (storeLiteral): the
// same bytes as the string's, whatever its length, alone and among other
// operands (which the words' last bytes, free room, are written before).
// Its tag says whether a formatter must scan it for bytes to escape: one
// stored as words (up to 61 bytes, where the compiler knows them: an
// optimized build) that holds none is kRaw, any other kText.
inline muon::detail::OperandTag literalTagFor(std::string_view text) {
#ifndef __OPTIMIZE__
  return muon::detail::kOperandText;
#endif
  if (text.size() > 61) return muon::detail::kOperandText;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return muon::detail::kOperandText;
  }
  return muon::detail::kOperandRaw;
}
#define MUON_EXPECT_LITERAL_AS_STRING(literal)                                            \
  for (char fill : {'\0', '\xff'}) {                                                       \
    const std::string_view text(literal);                                                 \
    const muon::detail::OperandTag tag = literalTagFor(text);                              \
    auto asString = [&](auto r) {                                                          \
      return muon::detail::recordBytes(r, tag, text.data(), text.size());                  \
    };                                                                                     \
    EXPECT_EQ(operandBytes([](auto r) { return r << literal; }, fill),                    \
              operandBytes([&](auto r) { return asString(r); }, fill))                     \
        << literal;                                                                        \
    EXPECT_EQ(operandBytes([](auto r) { return r << 'a' << literal << 7 << literal << 2.5; }, fill), \
              operandBytes([&](auto r) { return asString(asString(r << 'a') << 7) << 2.5; }, fill)) \
        << literal;                                                                        \
  }

TEST(StatementOperandsTest, ALiteralIsStoredAsTheSameBytesAsItsString) {
  MUON_EXPECT_LITERAL_AS_STRING("");
  MUON_EXPECT_LITERAL_AS_STRING("a");
  MUON_EXPECT_LITERAL_AS_STRING("hello");       // one word
  MUON_EXPECT_LITERAL_AS_STRING("hello w");     // one word to its last byte
  MUON_EXPECT_LITERAL_AS_STRING("hello wo");    // two
  MUON_EXPECT_LITERAL_AS_STRING("Logging int: ");
  MUON_EXPECT_LITERAL_AS_STRING(", double: ");
  MUON_EXPECT_LITERAL_AS_STRING("caf\xc3\xa9 \"quoted\"\t\\");
  MUON_EXPECT_LITERAL_AS_STRING("caf\xc3\xa9 \"quoted\" \\");  // nothing to escape
  MUON_EXPECT_LITERAL_AS_STRING("line\nbreak");
  MUON_EXPECT_LITERAL_AS_STRING("del\x7f");
  MUON_EXPECT_LITERAL_AS_STRING("0123456789012345678901234567890123456789012345678901234567890");  // 8 words
  MUON_EXPECT_LITERAL_AS_STRING("01234567890123456789012345678901234567890123456789012345678901");  // copied
  MUON_EXPECT_LITERAL_AS_STRING(
      "a literal longer than any of the words a literal is stored as, and copied as a string "
      "is, over several lines of source");
}

TEST(StatementOperandsTest, AnArrayIsStoredUpToItsFirstNul) {
  // A literal with a NUL inside, as LogStream writes it: up to the NUL.
  EXPECT_EQ(operandBytes([](auto r) { return r << "ab\0cd" << 1; }, '\0'),
            operandBytes([](auto r) { return r << std::string_view("ab") << 1; }, '\0'));
  // An array filled at run time.
  char name[32];
  std::snprintf(name, sizeof name, "worker-%d", 17);
  EXPECT_EQ(operandBytes([&](auto r) { return r << name << 1; }, '\0'),
            operandBytes([](auto r) { return r << std::string_view("worker-17") << 1; }, '\0'));
}

TEST_F(StatementTest, TheCommonPathWritesTheLinesAStatementFormatsItself) {
  // Twice first, so that the rate limit's counts are the same in both runs.
  direct(muon::test::logEveryKindOfStatement);
  const std::vector<std::string> expected = direct(muon::test::logEveryKindOfStatement);
  const std::vector<std::string> got = deferred(muon::test::logEveryKindOfStatement);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "line " << i;
}

TEST_F(StatementTest, StringsPastTheRecordsRoomGiveTheSameLines) {
  auto body = [] {
    for (size_t n : {1000u, 2000u, 3990u, 4100u, 70000u}) {
      const std::string s(n, 's');
      LOG_INFO << "a" << 1 << s << 2.5 << s << "b";
      LOG_INFO << s << s << s << 'c';
    }
  };
  EXPECT_EQ(deferred(body), direct(body));
}

TEST_F(StatementTest, AnOperandThatLogsHasItsLinesFirstAndEveryLineWritten) {
  for (int inner : {1, 3, 20000}) {
    g_innerLines = inner;
    const std::vector<std::string> lines = deferred([] {
      LOG_INFO << "outer " << logsInner() << " end";
      LOG_INFO << "next";
    });
    ASSERT_EQ(lines.size(), static_cast<size_t>(inner) + 2) << inner;
    for (int i = 0; i < inner; ++i) {
      EXPECT_NE(lines[i].find("INFO  inner " + std::to_string(i) + " - "), std::string::npos)
          << lines[i];
    }
    EXPECT_NE(lines[inner].find("INFO  outer 7 end - "), std::string::npos) << lines[inner];
    EXPECT_NE(lines[inner + 1].find("INFO  next - "), std::string::npos) << lines[inner + 1];
  }
}

TEST_F(StatementTest, AnOperandThatThrowsLeavesTheLaneToTheNextStatement) {
  const std::vector<std::string> lines = deferred([] {
    for (int i = 0; i < 3; ++i) {
      EXPECT_THROW(LOG_INFO << "lost " << i << throws(), std::runtime_error);
      // One that became a Logger (a user's operator<<) and then threw.
      const muon::test::every::Point point{i, i};
      EXPECT_THROW(LOG_INFO << "kept " << i << point << throws(), std::runtime_error);
      // One past its room.
      EXPECT_THROW(LOG_INFO << std::string(5000, 'x') << throws(), std::runtime_error);
      LOG_INFO << "after " << i;
      EXPECT_TRUE(infoTakesTheLane());
      EXPECT_FALSE(muon::detail::t_route.lane->busy());
    }
  });
  ASSERT_EQ(lines.size(), 6u);
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_NE(lines[2 * i].find("INFO  kept " + n + "(" + n + ", " + n + ")"),
              std::string::npos)
        << lines[2 * i];
    EXPECT_NE(lines[2 * i + 1].find("INFO  after " + std::to_string(i) + " - "),
              std::string::npos)
        << lines[2 * i + 1];
  }
}

// A statement that logs, in the operands of one whose record left the lane
// for a slot (a long string), and throws: the lane was reopened where the
// outer record began, so the inner one begins at that same place. Its
// throw must leave the lane and nothing else, not the outer statement's
// slot, which goes on (once with its record in the slot, once on the heap:
// over a slot's room, a line cut at its end), and every line after must
// come out whole.
int logsAndCatches(int i) {
  try {
    LOG_INFO << "inner " << i << throws();
  } catch (const std::runtime_error&) {
  }
  return i;
}

TEST_F(StatementTest, AThrowNestedInAMovedRecordsOperandsLeavesTheOuterStatementWhole) {
  // Past the room in place with kRecorderRoom after it (so the line is cut).
  const std::string big(2975, 'y');
  const std::string huge(7000, 'z');
  const std::vector<std::string> lines = deferred([&] {
    for (int i = 0; i < 3; ++i) {
      LOG_INFO << big << " outer " << logsAndCatches(i) << " end";
      LOG_INFO << huge << " outer " << logsAndCatches(i) << big << " end";
      LOG_INFO << "after " << i;
      EXPECT_TRUE(infoTakesTheLane());
      EXPECT_FALSE(muon::detail::t_route.lane->busy());
      EXPECT_EQ(muon::detail::statementSlotsInUse(), 0u);
    }
  });
  ASSERT_EQ(lines.size(), 9u);
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_NE(lines[3 * i].find("INFO  " + big.substr(0, 2000)), std::string::npos);
    EXPECT_NE(lines[3 * i + 1].find("INFO  " + huge.substr(0, 2000)), std::string::npos);
    EXPECT_NE(lines[3 * i + 2].find("INFO  after " + n + " - "), std::string::npos)
        << lines[3 * i + 2];
  }
}

TEST_F(StatementTest, AThrowOffTheCommonPathReleasesWhatTheStatementHeld) {
  const std::vector<std::string> lines = direct([] {
    EXPECT_THROW(LOG_INFO << "lost " << throws(), std::runtime_error);
    EXPECT_THROW(LOG_INFO << std::string(9000, 'x') << throws(), std::runtime_error);
    EXPECT_EQ(muon::detail::statementSlotsInUse(), 0u);
    LOG_INFO << "after";
  });
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("INFO  after - "), std::string::npos) << lines[0];
}

TEST_F(StatementTest, AFlushLevelAContextAndADetachReachTheRoute) {
  const std::vector<std::string> lines = deferred([] {
    Logger::setFlushLevel(Logger::INFO);
    LOG_INFO << "flushed";
    EXPECT_FALSE(infoTakesTheLane());
    Logger::setFlushLevel(Logger::FATAL);
    LOG_INFO << "in place again";
    EXPECT_TRUE(infoTakesTheLane());
    {
      muon::LogContext context{{"request_id", "r-9"}};
      LOG_INFO << "with context";
      EXPECT_FALSE(infoTakesTheLane());
    }
    LOG_INFO << "without";
    EXPECT_TRUE(infoTakesTheLane());
  });
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("INFO  flushed - "), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("INFO  in place again - "), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("INFO  with context request_id=r-9 - "), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("INFO  without - "), std::string::npos) << lines[3];
  // Detached: the next statement goes to the output.
  const std::vector<std::string> out = direct([] { LOG_INFO << "to stdout"; });
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(infoTakesTheLane());
}

}  // namespace
