#include "SudokuSolver.h"

#include <array>
#include <cstdint>

namespace sudoku {
namespace {

constexpr uint16_t kAll = 0x3fe;  // bits 1..9

class Board {
 public:
  // False if two givens clash.
  bool load(std::string_view puzzle) {
    for (size_t i = 0; i < kCells; ++i) {
      const char c = puzzle[i];
      if (c >= '1' && c <= '9') {
        const int digit = c - '0';
        if (!canPlace(i, digit)) return false;
        place(i, digit);
      }
    }
    return true;
  }

  // How a search ended: a solution on the board, no solution below this
  // point, or the budget of guesses spent (the board is then left as it is).
  enum class Search { kSolved, kDeadEnd, kSpent };

  // Fills the board, placing at most `guesses` digits on trial.
  Search search(uint64_t* guesses) {
    size_t best = kCells;
    int bestCount = 10;
    for (size_t i = 0; i < kCells; ++i) {
      if (cells_[i] != 0) continue;
      const int count = __builtin_popcount(candidates(i));
      if (count < bestCount) {
        best = i;
        bestCount = count;
        if (count <= 1) break;
      }
    }
    if (best == kCells) return Search::kSolved;  // full
    const uint16_t mask = candidates(best);
    for (int digit = 1; digit <= 9; ++digit) {
      if ((mask & (1u << digit)) == 0) continue;
      if (*guesses == 0) return Search::kSpent;
      --*guesses;
      place(best, digit);
      const Search below = search(guesses);
      if (below != Search::kDeadEnd) return below;
      unplace(best, digit);
    }
    return Search::kDeadEnd;
  }

  std::string toString() const {
    std::string s(kCells, '0');
    for (size_t i = 0; i < kCells; ++i) s[i] = static_cast<char>('0' + cells_[i]);
    return s;
  }

 private:
  static size_t row(size_t i) { return i / 9; }
  static size_t col(size_t i) { return i % 9; }
  static size_t box(size_t i) { return row(i) / 3 * 3 + col(i) / 3; }

  uint16_t candidates(size_t i) const {
    return static_cast<uint16_t>(kAll & ~(rows_[row(i)] | cols_[col(i)] | boxes_[box(i)]));
  }
  bool canPlace(size_t i, int digit) const { return (candidates(i) & (1u << digit)) != 0; }
  void place(size_t i, int digit) { toggle(i, digit, digit); }
  void unplace(size_t i, int digit) { toggle(i, digit, 0); }
  void toggle(size_t i, int digit, int value) {
    const auto bit = static_cast<uint16_t>(1u << digit);
    rows_[row(i)] ^= bit;
    cols_[col(i)] ^= bit;
    boxes_[box(i)] ^= bit;
    cells_[i] = static_cast<uint8_t>(value);
  }

  std::array<uint8_t, kCells> cells_{};
  std::array<uint16_t, 9> rows_{};
  std::array<uint16_t, 9> cols_{};
  std::array<uint16_t, 9> boxes_{};
};

}  // namespace

Answer solve(std::string_view puzzle, uint64_t maxGuesses) {
  Answer answer;
  Board board;
  uint64_t left = maxGuesses;
  if (!board.load(puzzle)) {
    answer.outcome = Outcome::kNoSolution;
  } else {
    switch (board.search(&left)) {
      case Board::Search::kSolved:
        answer.outcome = Outcome::kSolved;
        answer.solution = board.toString();
        break;
      case Board::Search::kDeadEnd:
        answer.outcome = Outcome::kNoSolution;
        break;
      case Board::Search::kSpent:
        answer.outcome = Outcome::kTooHard;
        break;
    }
  }
  answer.guesses = maxGuesses - left;
  return answer;
}

}  // namespace sudoku
