#pragma once
// `gpu-topology-extender explain`: asks a running extender for GET URL/explain?pod=NS/NAME and
// prints its answer as a table (report/explain_table.h) or as the JSON it got.
#include "app/cli_options.h"

namespace gte::app {

// The process exit status: 0, 1 when the extender could not be asked or refused, 2 for a bad URL.
int runExplainCommand(const ExplainOptions& options);

}  // namespace gte::app
