// sudoku_server PORT [IO_THREADS] [COMPUTE_THREADS] [MAX_GUESSES]: solves sudoku puzzles
// (the book's §6.6.1, the form with a compute thread pool: "one loop per
// thread + thread pool").
//
// Protocol, one request per line ("\r\n"): "[ID:]PUZZLE" where PUZZLE is 81
// characters, '1'-'9' given and '0' or '.' empty. The answer is
// "[ID:]SOLUTION\r\n" (81 digits), "[ID:]NoSolution\r\n", or
// "[ID:]TooHard\r\n" when the search placed MAX_GUESSES digits on trial
// (default sudoku::kDefaultMaxGuesses) without an answer: a hostile puzzle
// costs a compute thread that much and no more, and the connection stays
// open. Anything else -- a wrong length, another character, a line over
// kMaxLine bytes -- gets "Bad Request!\r\n" and the connection is closed.
//
// The I/O loops only cut lines and check them; solving runs in the pool, so
// a hard puzzle never delays other clients' I/O. Answers to one client's
// pipelined requests may come back in another order: the ID says which is
// which.
#include <cstdint>
#include <cstdio>
#include <string>

#include "muon/base/Logging.h"
#include "muon/net/Buffer.h"
#include "muon/net/EventLoop.h"
#include "muon/net/InetAddress.h"
#include "muon/net/TcpConnection.h"
#include "muon/net/TcpServer.h"

#include "CommandLine.h"
#include "StopSignals.h"
#include "SudokuSolver.h"
#include "ThreadPool.h"

using muon::examples::ThreadPool;
using muon::net::Buffer;
using muon::net::EventLoop;
using muon::net::InetAddress;
using muon::net::TcpConnectionPtr;
using muon::net::TcpServer;

namespace {

constexpr size_t kMaxLine = 1024;

bool isPuzzle(const std::string& s) {
  if (s.size() != sudoku::kCells) return false;
  for (char c : s) {
    if (!(c == '.' || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

void badRequest(const TcpConnectionPtr& conn) {
  conn->send("Bad Request!\r\n");
  conn->shutdown();
}

const char* answerText(const sudoku::Answer& answer) {
  switch (answer.outcome) {
    case sudoku::Outcome::kSolved:
      return answer.solution.c_str();
    case sudoku::Outcome::kNoSolution:
      return "NoSolution";
    case sudoku::Outcome::kTooHard:
      return "TooHard";
  }
  return "NoSolution";
}

// False if the line is malformed.
bool handleRequest(ThreadPool* pool, uint64_t maxGuesses, const TcpConnectionPtr& conn,
                   const std::string& line) {
  std::string id, puzzle = line;
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    id = line.substr(0, colon + 1);
    puzzle = line.substr(colon + 1);
  }
  if (!isPuzzle(puzzle)) return false;
  pool->run([conn, id, puzzle, maxGuesses] {
    const sudoku::Answer answer = sudoku::solve(puzzle, maxGuesses);
    if (answer.outcome == sudoku::Outcome::kTooHard) {
      LOG_WARN << "sudoku " << conn->peerAddress().toIpPort() << " " << id << puzzle
               << " unanswered after " << answer.guesses << " guesses";
    }
    conn->send(id + answerText(answer) + "\r\n");
  });
  return true;
}

void onMessage(ThreadPool* pool, uint64_t maxGuesses, const TcpConnectionPtr& conn, Buffer* buf) {
  while (const char* crlf = buf->findCRLF()) {
    std::string line(buf->peek(), crlf);
    buf->retrieveUntil(crlf + 2);
    if (!handleRequest(pool, maxGuesses, conn, line)) {
      LOG_WARN << "sudoku " << conn->peerAddress().toIpPort() << " bad request";
      buf->retrieveAll();
      badRequest(conn);
      return;
    }
  }
  if (buf->readableBytes() > kMaxLine) {
    buf->retrieveAll();
    badRequest(conn);
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  // --help: the usage on stdout, status 0 (a bad command line: stderr, 2).
  const bool help = muon::examples::helpRequested(argc, argv);
  long port = 0, ioThreads = 0, computeThreads = 2;
  long maxGuesses = static_cast<long>(sudoku::kDefaultMaxGuesses);
  if (help || argc < 2 || argc > 5 || !muon::examples::parseInt(argv[1], 0, 65535, &port) ||
      (argc >= 3 && !muon::examples::parseInt(argv[2], 0, 256, &ioThreads)) ||
      (argc >= 4 && !muon::examples::parseInt(argv[3], 1, 256, &computeThreads)) ||
      (argc >= 5 && !muon::examples::parseInt(argv[4], 1, 1000L * 1000 * 1000 * 1000, &maxGuesses))) {
    std::fprintf(help ? stdout : stderr,
                 "Usage: %s PORT [IO_THREADS] [COMPUTE_THREADS] [MAX_GUESSES]\n"
                 "  answers \"[ID:]PUZZLE\\r\\n\" lines; IO_THREADS 0..256 (default 0),\n"
                 "  COMPUTE_THREADS 1..256 (default 2); MAX_GUESSES 1..10^12 (default %llu):\n"
                 "  digits one search may place on trial before it answers TooHard;\n"
                 "  PORT 0 picks a free port (printed)\n",
                 argv[0], static_cast<unsigned long long>(sudoku::kDefaultMaxGuesses));
    return help ? 0 : 2;
  }
  EventLoop loop;
  muon::examples::StopSignals stopSignals(&loop, "sudoku_server");
  // Outlives the server: the I/O loops may call run() until the server is
  // destroyed (run() after stop() does nothing).
  ThreadPool pool(static_cast<int>(computeThreads));
  TcpServer server(&loop, InetAddress(static_cast<uint16_t>(port)), "SudokuServer");
  server.setConnectionCallback([](const TcpConnectionPtr& conn) {
    LOG_INFO << conn->peerAddress().toIpPort() << " is " << (conn->connected() ? "UP" : "DOWN");
  });
  const auto guesses = static_cast<uint64_t>(maxGuesses);
  server.setMessageCallback([&pool, guesses](const TcpConnectionPtr& conn, Buffer* buf,
                                             muon::Timestamp) {
    onMessage(&pool, guesses, conn, buf);
  });
  server.setThreadNum(static_cast<int>(ioThreads));
  server.start();
  LOG_INFO << "sudoku_server listening on " << server.listenAddress().toIpPort() << " with "
           << ioThreads << " I/O and " << computeThreads << " compute threads, at most "
           << maxGuesses << " guesses a puzzle";
  loop.loop();
  // The queued answers go out while every loop is still alive.
  pool.stop();
}
