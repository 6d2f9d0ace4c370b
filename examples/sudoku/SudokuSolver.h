// Solves 9x9 sudoku puzzles: depth-first search that always fills the
// empty cell with the fewest candidates, candidates kept as bit masks per
// row, column and box. Pure computation, no state shared between calls:
// safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sudoku {

constexpr size_t kCells = 81;

// The default bound on one puzzle's search, in digits placed on trial: above
// what the hard puzzles we know need, so that a hostile one (its first
// solution, or the proof that it has none, deep in the search) costs a
// thread a bounded time, not as long as it likes (figures in docs/book.md).
constexpr uint64_t kDefaultMaxGuesses = 10 * 1000 * 1000;

enum class Outcome {
  kSolved,
  kNoSolution,  // givens that clash, or a search that found none
  kTooHard,     // the bound was reached first
};

struct Answer {
  Outcome outcome = Outcome::kNoSolution;
  std::string solution;  // the 81 digits if kSolved, else empty
  uint64_t guesses = 0;  // digits placed on trial
};

// puzzle: 81 characters, '1'-'9' given, '0' or '.' empty; the caller checks
// the length and characters first. Searches placing at most `maxGuesses`
// digits on trial.
Answer solve(std::string_view puzzle, uint64_t maxGuesses = kDefaultMaxGuesses);

}  // namespace sudoku
