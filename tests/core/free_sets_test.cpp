// freeNvlinkSets: how many k-GPU all-NVLink pods a node's free GPUs could still take at once, on
// real machines' NVLink graphs, with the arithmetic of each case in its comment.
#include <catch2/catch_test_macros.hpp>

#include "core/free_sets.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

FreeSetCounts setsOf(const NodeInfo& node, const NodeUsage& usage = {}) {
  return freeNvlinkSets(*buildNodeState(node, usage, defaultPolicy()));
}

TEST_CASE("free NVLink sets on a DGX-1V cube mesh", "[core][free-sets]") {
  // NVLink pairs: 0-1 0-2 0-3 0-4 1-2 1-3 1-5 2-3 2-6 3-7 4-5 4-6 4-7 5-6 5-7 6-7; the all-NVLink
  // quads are {0,1,2,3} and {4,5,6,7}, and no 8-set is all-NVLink.
  CHECK(setsOf(testing::makeDgx1Volta()) == FreeSetCounts{8, 4, 2, 0});

  // GPUs 2 and 5 used: free {0,1,3,4,6,7}, pairs 0-1 0-3 0-4 1-3 3-7 4-6 4-7 6-7. Three disjoint
  // pairs ({0,1} {3,7} {4,6}); no quad: {0,1,3} and {4,6,7} are triangles whose fourth is used.
  CHECK(setsOf(testing::makeDgx1Volta(FixtureState().withUsed("00100100"))) ==
        FreeSetCounts{6, 3, 0, 0});

  // The extender's own usage counts like the labels': GPU 0 taken leaves 7 free GPUs, so 3 pairs
  // at most ({1,5} {2,3} {6,7}); the quad {4,5,6,7} is whole, {1,2,3} lost its fourth.
  NodeUsage zero;
  zero.gpus = {0};
  CHECK(setsOf(testing::makeDgx1Volta(), zero) == FreeSetCounts{7, 3, 1, 0});
}

TEST_CASE("free NVLink sets through NVSwitch: every pair is NVLink", "[core][free-sets]") {
  CHECK(setsOf(testing::makeDgxH100()) == FreeSetCounts{8, 4, 2, 1});
  // Three used: 5 free -> 2 pairs, 1 quad, no 8.
  CHECK(setsOf(testing::makeDgxH100(FixtureState().withUsed("10010001"))) ==
        FreeSetCounts{5, 2, 1, 0});
  // DGX-2: 16 GPUs, 8 pairs, 4 quads, 2 eights; the search stops at each bound.
  CHECK(setsOf(testing::makeDgx2()) == FreeSetCounts{16, 8, 4, 2});
}

TEST_CASE("free NVLink sets with bridged pairs only", "[core][free-sets]") {
  // NVLink bridges on (0,2) (1,3) (4,5) (6,7): four pairs, no quad.
  CHECK(setsOf(testing::makeA100PcieBridged()) == FreeSetCounts{8, 4, 0, 0});
  // GPU 2 used breaks its bridge: three pairs left, GPU 0 stranded.
  CHECK(setsOf(testing::makeA100PcieBridged(FixtureState().withUsed("00100000"))) ==
        FreeSetCounts{7, 3, 0, 0});
}

TEST_CASE("free sets without NVLink or without known links", "[core][free-sets]") {
  // PCIe only: every free GPU is a 1-set, no pair is NVLink.
  CHECK(setsOf(testing::make4xPcieL40s()) == FreeSetCounts{4, 0, 0, 0});
  // GPU Feature Discovery labels only: links unknown, so no set is known to be NVLink.
  CHECK(setsOf(testing::makeGfdNode("gfd", 8, "NVIDIA-H100-80GB-HBM3")) ==
        FreeSetCounts{8, 0, 0, 0});
  CHECK(freeNvlinkSets(*buildNodeState(testing::makeDgxH100(), {}, defaultPolicy()), 0) == 0);
}

TEST_CASE("a 16-GPU table without structure stays within the allowance", "[core][free-sets]") {
  const FreeSetCounts sets = setsOf(testing::makePatternless16());
  CHECK(sets[0] == 16);
  for (std::size_t i = 1; i < sets.size(); ++i) {
    CHECK(sets[i] >= 0);
    CHECK(sets[i] <= 16 / kFreeSetSizes[i]);
  }
}

}  // namespace
}  // namespace gte
