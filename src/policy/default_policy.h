#pragma once
// The built-in policy, so the binary runs without a policy file. config/scheduler-policy.yaml
// spells out exactly this policy (a test keeps the two equal).
#include <vector>

#include "policy/mig_product.h"
#include "policy/policy.h"

namespace gte {

Policy defaultPolicy();

// MIG geometry of A100-40GB, A100-80GB, H100 (80GB), H100 NVL, H200 and B200
// (docs/configuration.md, "Built-in products").
std::vector<MigProduct> defaultMigProducts();

}  // namespace gte
