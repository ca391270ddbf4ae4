// One node's topology-health figures (docs/topology-health.md) on real machines, with the
// arithmetic in the comments. Index i of the per-size arrays is k = 1, 2, 4, 8.
#include <catch2/catch_test_macros.hpp>

#include <array>

#include "core/node_health.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;
using Sizes = std::array<std::int32_t, kHealthSizeCount>;

NodeHealth healthOf(const NodeInfo& node) {
  return nodeHealth(*buildNodeState(node, {}, defaultPolicy()));
}

// DGX-1V NVLink neighbours (nvl 1122000210200200100001112212):
//   0:{1,2,3,4} 1:{0,2,3,5} 2:{0,1,3,6} 3:{0,1,2,7} 4:{0,5,6,7} 5:{1,4,6,7} 6:{2,4,5,7} 7:{3,4,5,6}
// All-NVLink quads: {0,1,2,3} and {4,5,6,7}; no all-NVLink set of 8 (0-5 is SYS).

TEST_CASE("an empty DGX-1V hosts every size at its best class", "[core][health]") {
  const NodeHealth h = healthOf(testing::makeDgx1Volta());
  CHECK(h.freeGpus == 8);
  // k=2: a perfect NVLink matching ({0,1} {2,3} {4,5} {6,7}); k=4: the two quads; k=8: the
  // device plugin's 8-set on the empty node is SYS-bound, and all 8 are free: 1.
  CHECK(h.hostable == Sizes{8, 4, 2, 1});
  CHECK(h.packable == Sizes{8, 8, 8, 8});
  CHECK(h.nvlinkSets == Sizes{8, 4, 2, 0});
  // No free GPU is outside an NVLink pair or quad; the node has no all-NVLink 8-set, so k=8 counts
  // nothing stranded.
  CHECK(h.stranded == Sizes{0, 0, 0, 0});
  // Largest free NVLink clique 4: sizes 1, 2, 4 are hosted as on the empty node; size 8 is not
  // NVLink-bound there and 8 are free: nothing unusable.
  CHECK(h.unusableGpus == 0);
  CHECK(h.strandedMigSlices == 0);
}

TEST_CASE("a 1-GPU pod on GPU 0 breaks quad A (docs/topology-health.md's picture)",
          "[core][health]") {
  const NodeHealth h = healthOf(testing::makeDgx1Volta(FixtureState().withUsed("10000000")));
  // Free {1..7}: pairs {1,2} {3,7} {4,5} (7 GPUs: at most 3); quad B {4,5,6,7} only; 7 < 8.
  CHECK(h.hostable == Sizes{7, 3, 1, 0});
  CHECK(h.packable == Sizes{7, 7, 7, 7});
  CHECK(h.nvlinkSets == Sizes{7, 3, 1, 0});
  // {1,2,3} are in no free NVLink quad.
  CHECK(h.stranded == Sizes{0, 0, 3, 0});
  // Largest free NVLink clique 4 (quad B): only size 8 is lost, 7 free GPUs: 7 / 4 = 1.75.
  CHECK(h.unusableGpus == 7);
}

TEST_CASE("a DGX-1V with GPUs 2 and 5 taken strands its free GPUs for 4-GPU pods",
          "[core][health]") {
  const NodeHealth h = healthOf(testing::makeDgx1Volta(FixtureState().withUsed("00100100")));
  // Free {0,1,3,4,6,7}. NVLink among them: 0:{1,3,4} 1:{0,3} 3:{0,1,7} 4:{0,6,7} 6:{4,7} 7:{3,4,6}.
  CHECK(h.freeGpus == 6);
  // k=2: {0,1} {3,7} {4,6} = 3. k=4: the triangles {0,1,3} and {4,6,7} have no common fourth
  // neighbour: 0. k=8: 6 < 8 free: 0.
  CHECK(h.hostable == Sizes{6, 3, 0, 0});
  CHECK(h.nvlinkSets == Sizes{6, 3, 0, 0});
  // Every usable GPU can host each size once emptied: the 6 free GPUs count towards "if packed".
  CHECK(h.packable == Sizes{6, 6, 6, 6});
  // k=4: all 6 free GPUs lie in no free NVLink quad although the node has two.
  CHECK(h.stranded == Sizes{0, 0, 6, 0});
  // Scoring's worked example (docs/scoring.md): size 4 cannot use the 6 free GPUs (largest free
  // NVLink clique 3), size 8 cannot either (6 < 8): 6 + 6 = 12, expected 12 / 4 = 3 GPUs.
  CHECK(h.unusableGpus == 12);
  // The device plugin gives a 2-GPU pod {6,7}: NV2, 2 x 25 = 50 GB/s one way.
  CHECK(h.offered[2] == SetQuality{LinkClass::kNvlink, 50});
  CHECK_FALSE(h.offered[1].known());  // one GPU has no pair
  CHECK_FALSE(h.offered[7].known());  // 7 > 6 free
}

TEST_CASE("an NVSwitch node is arithmetic: every free set is all-NVLink", "[core][health]") {
  // DGX H100, GPUs 0-2 taken: 5 free, one all-NVLink group.
  const NodeHealth h = healthOf(testing::makeDgxH100(FixtureState().withUsed("11100000")));
  CHECK(h.hostable == Sizes{5, 2, 1, 0});  // 5/2, 5/4, 5/8 rounded down
  CHECK(h.nvlinkSets == Sizes{5, 2, 1, 0});
  // An 8-GPU pod needs the whole node: the 5 free GPUs are in no free 8-set.
  CHECK(h.stranded == Sizes{0, 0, 0, 5});
  // NV18 x 25 GB/s = 450 for any pick.
  CHECK(h.offered[4] == SetQuality{LinkClass::kNvlink, 450});
}

TEST_CASE("a PCIe node's best class is what its switches give", "[core][health]") {
  // 4x L40S, every pair NODE: no NVLink, so nothing is NVLink-stranded; the best class for any k
  // is NODE, which every free pair has.
  const NodeHealth h = healthOf(testing::make4xPcieL40s(FixtureState().withUsed("1000")));
  CHECK(h.hostable == Sizes{3, 1, 0, 0});  // 3 free: one pair; 4 and 8 do not fit
  CHECK(h.packable == Sizes{3, 3, 3, 0});  // 4 usable GPUs: never an 8-GPU pod
  CHECK(h.nvlinkSets == Sizes{3, 0, 0, 0});
  CHECK(h.stranded == Sizes{0, 0, 0, 0});
  // NODE on PCIe Gen4 (Ada): 32 x 5 / 8 = 20 GB/s.
  CHECK(h.offered[2] == SetQuality{LinkClass::kNode, 20});
}

TEST_CASE("a 16-GPU node: sets by the NVSwitch groups", "[core][health]") {
  // DGX-2: 16x V100, NV6 between every pair through NVSwitch.
  const NodeHealth h = healthOf(testing::makeDgx2(FixtureState().withUsed("1000000000000000")));
  CHECK(h.hostable == Sizes{15, 7, 3, 1});
  CHECK(h.nvlinkSets == Sizes{15, 7, 3, 1});
  CHECK(h.stranded == Sizes{0, 0, 0, 0});
  CHECK_FALSE(h.approximate);
}

TEST_CASE("MIG slices no legal placement of a profile in use can take", "[core][health]") {
  SECTION("1g at slices 0 and 5: slice 7 is reachable by no 1g (starts 0-6)") {
    // Occupied {0,5}; free {1,2,3,4,6,7}; 1g fits at 1, 2, 3, 4, 6: slice 7 stranded.
    const NodeHealth h = healthOf(testing::makeDgxA100(
        FixtureState().withUsed("m0000000").withMig("10000000").withMigTokens(0, "00f05f")));
    CHECK(h.strandedMigSlices == 1);
  }
  SECTION("the labels-v1 worked example") {
    // GPU 0 fully partitioned (2g@0, 1g@2, 1g@3, 3g@4); GPU 1 seven 1g at 0-6, slice 7 free.
    // Profiles in use: 2g, 1g, 3g. Slice 7: 1g starts at 0-6, 2g at 0/2/4, 3g at 0/4 (4 is
    // taken): stranded 1.
    const NodeHealth h =
        healthOf(testing::makeDgxA100(FixtureState()
                                          .withUsed("mm010000")
                                          .withMig("11000000")
                                          .withMigTokens(0, "10u02f03u24f")
                                          .withMigTokens(1, "00f01f02u03f04f05u06f")));
    CHECK(h.strandedMigSlices == 1);
  }
  SECTION("an empty MIG GPU has no profile in use: nothing is judged stranded") {
    const NodeHealth h =
        healthOf(testing::makeDgxA100(FixtureState().withUsed("m0000000").withMig("10000000")));
    CHECK(h.strandedMigSlices == 0);
  }
}

TEST_CASE("health totals add up and keep the best offer per size", "[core][health]") {
  HealthTotals totals;
  totals.add(healthOf(testing::makeDgx1Volta(FixtureState().withUsed("00100100"))));
  totals.add(healthOf(testing::makeDgxH100(FixtureState().withUsed("11100000"))));
  CHECK(totals.nodes == 2);
  CHECK(totals.freeGpus == 11);
  CHECK(totals.hostable[1] == 3 + 2);
  // Packed 2-GPU pods: (6 + 5) / 2 = 5; hostable 5 as well. 4-GPU: 11 / 4 = 2 packed, 0 + 1
  // hostable: one 4-GPU pod of debt.
  CHECK(totals.packed(1) == 5);
  CHECK(totals.packed(2) == 2);
  CHECK(totals.hostable[2] == 1);
  // Best 2-GPU offer: the H100 pair, 450 GB/s.
  CHECK(totals.bestOffered[2] == SetQuality{LinkClass::kNvlink, 450});
  CHECK(totals.expectedUnusableGpus() * 4 == static_cast<double>(totals.unusableGpus));
}

}  // namespace
}  // namespace gte
