#pragma once
// The items of a comma-separated option value, "hgx-a100:16,pcie2:32": what every list option of
// the simulator is split into before its items are read. Empty items are kept ("a," has two), so
// that the reader rejects them by name.
#include <string_view>
#include <vector>

namespace gte::sim {

std::vector<std::string_view> commaItems(std::string_view text);

}  // namespace gte::sim
