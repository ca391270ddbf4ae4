// A node's charges: usage kept on put and erase, and preempt's what-if, which frees counted
// victims from the usage and releases the devices the labels show as an uncounted victim's.
#include "core/node_charges.h"

#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <vector>

#include "policy/default_policy.h"
#include "support/node_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

PodCharge charge(const char* uid, std::vector<int> gpus, bool counted = true) {
  return PodCharge{uid, counted, Allocation{true, std::move(gpus), {}}, 0};
}

TEST_CASE("NodeCharges: usage follows puts, replacements and erasures") {
  NodeCharges charges;
  charges.put(charge("a", {0, 1}));
  charges.put(charge("b", {4}));
  charges.put(charge("old", {6}, false));  // the labels show it: adds no usage
  CHECK(charges.usage().gpus == std::vector<int>{0, 1, 4});

  charges.put(charge("a", {2, 3}));  // the same pod, other GPUs
  CHECK(charges.usage().gpus == std::vector<int>{4, 2, 3});
  charges.erase("b");
  charges.erase("nobody");
  CHECK(charges.usage().gpus == std::vector<int>{2, 3});
  CHECK(charges.pods().size() == 2);

  PodCharge unplaced{"c", true, Allocation{false, {}, {}}, 2};
  charges.put(unplaced);
  CHECK(charges.usage().unknownGpus == 2);
  charges.erase("c");
  CHECK(charges.usage().unknownGpus == 0);
}

TEST_CASE("nodeStateWithout: counted victims leave the usage, covered victims release GPUs") {
  const auto policy = std::make_shared<const Policy>(defaultPolicy());
  // The labels show GPU 6 in use (pod "old", covered); pods "a" (0,1) and "b" (4) are counted.
  const NodeStateConstSharedPtr read =
      readNodeState(testing::makeDgxH100(FixtureState().withUsed("00000010")), *policy);
  auto charges = std::make_shared<NodeCharges>();
  charges->put(charge("a", {0, 1}));
  charges->put(charge("b", {4}));
  charges->put(charge("old", {6}, false));
  const NodeStateConstSharedPtr state = chargeNodeState(*read, charges, *policy);
  REQUIRE(state->freeCount == 4);

  CHECK(nodeStateWithout(*state, {"a"}, *policy)->freeCount == 6);
  CHECK(nodeStateWithout(*state, {"old"}, *policy)->freeCount == 5);
  CHECK(nodeStateWithout(*state, {"a", "b", "old"}, *policy)->freeCount == 8);
  CHECK(nodeStateWithout(*state, {"stranger"}, *policy)->freeCount == 4);
  // The published state itself is untouched.
  CHECK(state->freeCount == 4);
}

}  // namespace
}  // namespace gte
