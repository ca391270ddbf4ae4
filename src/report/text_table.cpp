#include "report/text_table.h"

#include <algorithm>
#include <cstddef>

namespace gte::report {

std::string alignedColumns(const std::vector<TextRow>& rows) {
  std::vector<std::size_t> width;
  for (const TextRow& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const TextRow& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      out += row[c];
      if (c + 1 < row.size()) out.append(width[c] - row[c].size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ')
      out.pop_back();
    out.push_back('\n');
  }
  return out;
}

std::string orDash(const std::string& cell) {
  return cell.empty() ? "-" : cell;
}

}  // namespace gte::report
