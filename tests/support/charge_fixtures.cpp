#include "support/charge_fixtures.h"

#include <memory>
#include <utility>

namespace gte::testing {

NodeChargesConstSharedPtr podHolding(std::vector<int> gpus) {
  NodeCharges charges;
  charges.put(PodCharge{"pod", true, Allocation{true, std::move(gpus), {}}, 0});
  return std::make_shared<const NodeCharges>(std::move(charges));
}

}  // namespace gte::testing
