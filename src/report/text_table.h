#pragma once
// Rows of cells as aligned text columns, the layout of every operator table (explain, whatif,
// nodes): each column as wide as its widest cell, two spaces between columns, no trailing spaces,
// one line per row. Pure.
#include <string>
#include <vector>

namespace gte::report {

using TextRow = std::vector<std::string>;

std::string alignedColumns(const std::vector<TextRow>& rows);

// "-" for an empty cell, the tables' mark for "does not apply".
std::string orDash(const std::string& cell);

}  // namespace gte::report
