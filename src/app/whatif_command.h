#pragma once
// `gpu-topology-extender whatif`: builds the what-if body from the flags and files, POSTs it to
// URL/whatif and prints the answer as a table (report/whatif_table.h) or as the JSON it got; and
// `gpu-topology-extender nodes`: GET URL/nodes, printed the same way (report/nodes_table.h).
#include <string>

#include "app/cli_options.h"
#include "base/result.h"

namespace gte::app {

// The contents of the files the options name (empty when not given).
struct WhatifFiles {
  std::string pod;     // --pod-file
  std::string csv;     // --csv
  std::string policy;  // --policy
};

// The POST body (docs/api.md, "What-if"). Errors: --pod-file is not one JSON object.
Result<std::string> whatifBody(const WhatifOptions& options, const WhatifFiles& files);

// The process exit status: 0; 1 when a file cannot be read or the extender could not be asked or
// refused; 2 for a bad URL.
int runWhatifCommand(const WhatifOptions& options);
int runNodesCommand(const NodesOptions& options);

}  // namespace gte::app
