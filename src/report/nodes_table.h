#pragma once
// The nodes table (the `nodes` command's, the kubectl plugin's, and GET /nodes?format=table): one
// line per node with its topology, usable and free GPUs, the free all-NVLink sets of 1/2/4/8 GPUs
// they still hold, the largest all-NVLink set and its GPU pairs per link class, then the totals.
// Pure.
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte::report {

// Errors: the text is not a nodes document.
Result<std::string> nodesTable(std::string_view json);

}  // namespace gte::report
