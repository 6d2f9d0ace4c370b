// sudoku_server PORT [IO_THREADS] [COMPUTE_THREADS]: solves sudoku puzzles
// (the book's §6.6.1, the form with a compute thread pool: "one loop per
// thread + thread pool").
//
// Protocol, one request per line ("\r\n"): "[ID:]PUZZLE" where PUZZLE is 81
// characters, '1'-'9' given and '0' or '.' empty. The answer is
// "[ID:]SOLUTION\r\n" (81 digits) or "[ID:]NoSolution\r\n". Anything else --
// a wrong length, another character, a line over kMaxLine bytes -- gets
// "Bad Request!\r\n" and the connection is closed.
//
// The I/O loops only cut lines and check them; solving runs in the pool, so
// a hard puzzle never delays other clients' I/O. Answers to one client's
// pipelined requests may come back in another order: the ID says which is
// which.
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

// False if the line is malformed.
bool handleRequest(ThreadPool* pool, const TcpConnectionPtr& conn, const std::string& line) {
  std::string id, puzzle = line;
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    id = line.substr(0, colon + 1);
    puzzle = line.substr(colon + 1);
  }
  if (!isPuzzle(puzzle)) return false;
  pool->run([conn, id, puzzle] {
    const std::string solution = sudoku::solve(puzzle);
    conn->send(id + (solution.empty() ? "NoSolution" : solution) + "\r\n");
  });
  return true;
}

void onMessage(ThreadPool* pool, const TcpConnectionPtr& conn, Buffer* buf) {
  while (const char* crlf = buf->findCRLF()) {
    std::string line(buf->peek(), crlf);
    buf->retrieveUntil(crlf + 2);
    if (!handleRequest(pool, conn, line)) {
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
  long port = 0, ioThreads = 0, computeThreads = 2;
  if (argc < 2 || argc > 4 || !muon::examples::parseInt(argv[1], 0, 65535, &port) ||
      (argc >= 3 && !muon::examples::parseInt(argv[2], 0, 256, &ioThreads)) ||
      (argc >= 4 && !muon::examples::parseInt(argv[3], 1, 256, &computeThreads))) {
    std::fprintf(stderr,
                 "Usage: %s PORT [IO_THREADS] [COMPUTE_THREADS]\n"
                 "  answers \"[ID:]PUZZLE\\r\\n\" lines; IO_THREADS 0..256 (default 0),\n"
                 "  COMPUTE_THREADS 1..256 (default 2); PORT 0 picks a free port (printed)\n",
                 argv[0]);
    return 2;
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
  server.setMessageCallback([&pool](const TcpConnectionPtr& conn, Buffer* buf, muon::Timestamp) {
    onMessage(&pool, conn, buf);
  });
  server.setThreadNum(static_cast<int>(ioThreads));
  server.start();
  LOG_INFO << "sudoku_server listening on " << server.listenAddress().toIpPort() << " with "
           << ioThreads << " I/O and " << computeThreads << " compute threads";
  muon::Logger::flush();
  loop.loop();
  // The queued answers go out while every loop is still alive.
  pool.stop();
}
