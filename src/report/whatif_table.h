#pragma once
// The what-if table (the `whatif` command's, the kubectl plugin's, and POST /whatif?format=table):
// one line per pod in arrival order with the node it would go to, the GPUs it would get, their
// weakest link, the scores and what it strands (the node's free all-NVLink sets of 1/2/4/8 GPUs
// before and after it), then the cluster's free sets before and after the whole run. With a
// proposed policy the two runs stand side by side, one group of columns each. Pure.
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte::report {

// Errors: the text is not a what-if document.
Result<std::string> whatifTable(std::string_view json);

}  // namespace gte::report
