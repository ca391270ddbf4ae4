#pragma once
// `gpu-topology-extender claim-template`: prints a ResourceClaimTemplate for N GPUs whose request
// tries well-connected sets first (dra/claim_shaping.h, docs/dra.md "Claim shaping").
#include <string>

#include "app/cli_options.h"
#include "base/result.h"

namespace gte::app {

// The manifest text, or the error naming the flag.
Result<std::string> claimTemplateText(const ClaimTemplateOptions& options);

// The process exit status: 0, or 2 for options the template cannot be built from.
int runClaimTemplateCommand(const ClaimTemplateOptions& options);

}  // namespace gte::app
