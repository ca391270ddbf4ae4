#pragma once
// The explain table (the `explain` command's, and GET /explain?format=table): the extender's
// explain JSON (docs/api.md, "Explain") as one line per node, fitting nodes first and each group by
// score, highest first. WIRE is the score kube-scheduler's prioritize call gets
// (wireScoreAfterFilter: over the nodes filter kept), "-" for rejected nodes. Pure, so the layout
// is unit-tested without a server.
#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte::report {

// `top` 0: every node. Errors: the text is not an explain document.
Result<std::string> explainTable(std::string_view json, std::size_t top);

}  // namespace gte::report
