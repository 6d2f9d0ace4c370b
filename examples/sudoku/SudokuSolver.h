// Solves 9x9 sudoku puzzles: depth-first search that always fills the
// empty cell with the fewest candidates, candidates kept as bit masks per
// row, column and box. Pure computation, no state shared between calls:
// safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace sudoku {

constexpr size_t kCells = 81;

// puzzle: 81 characters, '1'-'9' given, '0' or '.' empty. Returns the 81
// digits of a solution, or "" if there is none (givens that clash
// included). The caller checks the length and characters first.
std::string solve(std::string_view puzzle);

}  // namespace sudoku
