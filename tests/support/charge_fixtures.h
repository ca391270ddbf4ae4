#pragma once
// Charges as the cluster cache hands them to the snapshot builder, for one-line situations.
#include <vector>

#include "core/node_charges.h"

namespace gte::testing {

// The charges of one bound pod holding whole GPUs `gpus`.
NodeChargesConstSharedPtr podHolding(std::vector<int> gpus);

}  // namespace gte::testing
