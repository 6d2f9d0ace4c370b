// sudoku_server: a known puzzle answered with its solution (with and
// without an id, pipelined), an impossible one with NoSolution, a
// malformed one with "Bad Request!" and a close, one whose search is long
// with TooHard once the bound on guesses is reached.
#include <unistd.h>

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "NetTestUtil.h"
#include "ReadUntil.h"

using namespace muon::net::test;
using muon::test::ChildProgram;

namespace {

const std::string kPuzzle =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
const std::string kSolution =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
// Long for a depth-first search that fills the cell with the fewest
// candidates first: a dead subtree of millions of guesses comes before its
// first solution (Norvig's "hard1"; figures in docs/book.md).
const std::string kLongSearch =
    ".....6....59.....82....8....45........3........6..3.54...325..6..................";

}  // namespace

TEST(SudokuServer, SolvesAKnownPuzzle) {
  ChildProgram server("sudoku_server", {"0", "1", "2"});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  const int fd = connectTo(loopback(port));
  ASSERT_GE(fd, 0);
  const std::string request = kPuzzle + "\r\n";
  ASSERT_TRUE(writeAll(fd, request.data(), request.size()));
  EXPECT_EQ(readCrlfLine(fd), kSolution);
  // Pipelined, with ids: answers may come in any order, the ids tell.
  std::string zeros = kPuzzle;
  for (char& c : zeros) {
    if (c == '.') c = '0';
  }
  std::string clash = std::string("55") + std::string(79, '0');  // two 5s in a row
  const std::string batch = "a:" + kPuzzle + "\r\nb:" + zeros + "\r\nc:" + clash + "\r\n";
  ASSERT_TRUE(writeAll(fd, batch.data(), batch.size()));
  std::set<std::string> answers;
  for (int i = 0; i < 3; ++i) answers.insert(readCrlfLine(fd));
  EXPECT_EQ(answers, (std::set<std::string>{"a:" + kSolution, "b:" + kSolution, "c:NoSolution"}));
  ::close(fd);
  EXPECT_TRUE(server.stopsCleanly());
}

TEST(SudokuServer, RejectsMalformedRequests) {
  ChildProgram server("sudoku_server", {"0"});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  for (const std::string& bad : {kPuzzle.substr(1) + "\r\n",          // 80 cells
                                 kPuzzle + "1\r\n",                   // 82 cells
                                 "x" + kPuzzle.substr(1) + "\r\n",    // not a digit
                                 std::string(2000, '1')}) {           // no line end
    const int fd = connectTo(loopback(port));
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(writeAll(fd, bad.data(), bad.size()));
    EXPECT_EQ(readCrlfLine(fd), "Bad Request!") << bad.size();
    EXPECT_TRUE(readsEof(fd));
    ::close(fd);
  }
  EXPECT_TRUE(server.stopsCleanly());
}

// With a bound of 10,000 guesses the long puzzle is answered TooHard; the
// connection stays open, and the next puzzle on it is solved (one compute
// thread: the answers come in order).
TEST(SudokuServer, TooHardPuzzleIsAnsweredOnceTheBoundIsReached) {
  ChildProgram server("sudoku_server", {"0", "0", "1", "10000"});
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  const int fd = connectTo(loopback(port));
  ASSERT_GE(fd, 0);
  const std::string request = "h:" + kLongSearch + "\r\n" + "k:" + kPuzzle + "\r\n";
  ASSERT_TRUE(writeAll(fd, request.data(), request.size()));
  EXPECT_EQ(readCrlfLine(fd), "h:TooHard");
  EXPECT_EQ(readCrlfLine(fd), "k:" + kSolution);
  ::close(fd);
  EXPECT_TRUE(server.stopsCleanly());
  EXPECT_NE(server.output().find("unanswered after 10000 guesses"), std::string::npos)
      << server.output();
}
