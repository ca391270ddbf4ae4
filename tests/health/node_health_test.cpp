// One node's topology-health figures (docs/topology-health.md) on real machines, with the
// arithmetic in the comments. Index i of the per-size arrays is k = 1, 2, 4, 8.
#include <catch2/catch_test_macros.hpp>

#include <array>

#include "health/node_health.h"
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
// All-NVLink quads: {0,1,2,3} and {4,5,6,7}; no all-NVLink set of 8 (0-5 is SYS), so the device
// plugin's 8-set on the emptied node is SYS-bound: that is the node's best class for k = 8.
TEST_CASE("whole-GPU figures on real machines", "[core][health]") {
  struct Row {
    const char* what;
    NodeInfo node;
    Sizes hostable, packable, nvlinkSets, stranded;
    std::int32_t unusableGpus;
  };
  const Row rows[] = {
      // A perfect NVLink matching ({0,1} {2,3} {4,5} {6,7}), the two quads, all 8 free for the
      // SYS-bound 8-set. Largest free NVLink clique 4: every size hosted as on the empty node.
      {"empty DGX-1V",
       testing::makeDgx1Volta(),
       {8, 4, 2, 1},
       {8, 8, 8, 8},
       {8, 4, 2, 0},
       {0, 0, 0, 0},
       0},
      // GPU 0 taken (docs/topology-health.md's picture). Free {1..7}: pairs {1,2} {3,7} {4,5} (7
      // GPUs: at most 3), quad B only, 7 < 8. {1,2,3} are in no free NVLink quad. Largest free
      // clique 4: only size 8 is lost, with 7 free GPUs: 7.
      {"DGX-1V, GPU 0 taken",
       testing::makeDgx1Volta(FixtureState().withUsed("10000000")),
       {7, 3, 1, 0},
       {7, 7, 7, 7},
       {7, 3, 1, 0},
       {0, 0, 3, 0},
       7},
      // GPUs 2 and 5 taken: free {0,1,3,4,6,7}, NVLink among them 0:{1,3,4} 1:{0,3} 3:{0,1,7}
      // 4:{0,6,7} 6:{4,7} 7:{3,4,6}. Pairs {0,1} {3,7} {4,6}; the triangles {0,1,3} and {4,6,7}
      // have no common fourth neighbour: no quad, all 6 stranded for k = 4. Scoring's worked
      // example (docs/scoring.md): sizes 4 and 8 cannot use the 6 free GPUs: 6 + 6 = 12.
      {"DGX-1V, GPUs 2 and 5 taken",
       testing::makeDgx1Volta(FixtureState().withUsed("00100100")),
       {6, 3, 0, 0},
       {6, 6, 6, 6},
       {6, 3, 0, 0},
       {0, 0, 6, 0},
       12},
      // DGX H100, GPUs 0-2 taken: 5 free in one all-NVLink group: 5/2, 5/4, 5/8 rounded down; an
      // 8-GPU pod needs the whole node, so the 5 free GPUs are stranded for k = 8.
      {"DGX H100, 3 taken",
       testing::makeDgxH100(FixtureState().withUsed("11100000")),
       {5, 2, 1, 0},
       {5, 5, 5, 5},
       {5, 2, 1, 0},
       {0, 0, 0, 5},
       5},
      // 4x L40S, every pair NODE: no NVLink, so nothing is NVLink-stranded; the best class for any
      // k is NODE, which every free pair has. 4 usable GPUs: never an 8-GPU pod.
      {"4x L40S, 1 taken",
       testing::make4xPcieL40s(FixtureState().withUsed("1000")),
       {3, 1, 0, 0},
       {3, 3, 3, 0},
       {3, 0, 0, 0},
       {0, 0, 0, 0},
       3 + 3},
      // DGX-2: 16x V100, NV6 between every pair through NVSwitch, GPU 0 taken: 15 free.
      {"DGX-2, 1 taken",
       testing::makeDgx2(FixtureState().withUsed("1000000000000000")),
       {15, 7, 3, 1},
       {15, 15, 15, 15},
       {15, 7, 3, 1},
       {0, 0, 0, 0},
       0},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    const NodeHealth h = healthOf(row.node);
    CHECK(h.hostable == row.hostable);
    CHECK(h.packable == row.packable);
    CHECK(h.nvlinkSets == row.nvlinkSets);
    CHECK(h.stranded == row.stranded);
    CHECK(h.unusableGpus == row.unusableGpus);
    CHECK(h.strandedMigSlices == 0);
    CHECK_FALSE(h.approximate);
  }
}

TEST_CASE("the set a k-GPU pod would get now, per size", "[core][health]") {
  // DGX-1V with GPUs 2 and 5 taken: the device plugin gives a 2-GPU pod {6,7}, NV2: 2 x 25 = 50
  // GB/s one way; one GPU has no pair; 7 > 6 free.
  const NodeHealth v100 = healthOf(testing::makeDgx1Volta(FixtureState().withUsed("00100100")));
  CHECK(v100.offered[2] == SetQuality{LinkClass::kNvlink, 50});
  CHECK_FALSE(v100.offered[1].known());
  CHECK_FALSE(v100.offered[7].known());
  // NV18 x 25 GB/s = 450 for any pick on an H100.
  CHECK(healthOf(testing::makeDgxH100()).offered[4] == SetQuality{LinkClass::kNvlink, 450});
  // NODE on PCIe Gen4 (Ada): 32 x 5 / 8 = 20 GB/s.
  CHECK(healthOf(testing::make4xPcieL40s()).offered[2] == SetQuality{LinkClass::kNode, 20});
}

TEST_CASE("a node whose GPUs are shared offers no NVLink set", "[core][health]") {
  // DGX H100 time-sliced 4 ways (docs/sharing.md): its 8 free GPUs would be one NVLink 8-set,
  // but replicas land where the device plugin's tenant count puts them. 2- to 8-GPU pods still
  // fit (8 / k of them, links unknown); nothing is offered as a set and nothing stranded.
  NodeInfo node = testing::makeDgxH100(FixtureState().withName("sliced"));
  node.labels.insert_or_assign("nvidia.com/gpu.sharing-strategy", std::string("time-slicing"));
  node.labels.insert_or_assign("nvidia.com/gpu.replicas", std::string("4"));
  const NodeHealth shared = healthOf(node);
  CHECK(shared.nvlinkSets == Sizes{8, 0, 0, 0});
  CHECK(shared.hostable == Sizes{8, 4, 2, 1});
  CHECK(shared.stranded == Sizes{0, 0, 0, 0});
  CHECK_FALSE(shared.offered[2].known());
  CHECK_FALSE(shared.offered[8].known());
  // The same board with whole GPUs: one NVLink set of every size.
  CHECK(healthOf(testing::makeDgxH100()).nvlinkSets == Sizes{8, 4, 2, 1});
}

TEST_CASE("a shared node's GPUs, replicas and tenants", "[core][health]") {
  NodeInfo node = testing::makeDgxH100(FixtureState().withName("sliced"));
  node.labels.insert_or_assign("nvidia.com/gpu.sharing-strategy", std::string("time-slicing"));
  node.labels.insert_or_assign("nvidia.com/gpu.replicas", std::string("4"));
  // The agent counted 3, 2 and 1 pods' replicas on GPUs 0-2 (labels-v1 `tenants`, base 36).
  node.labels.insert_or_assign("gputopo.dev/tenants", std::string("32100000"));
  const NodeHealth shared = healthOf(node);
  CHECK(shared.sharedGpus == 8);
  CHECK(shared.sharedReplicas == 32);  // 4 per GPU
  CHECK(shared.sharedReplicasUsed == 6);
  CHECK(shared.sharedGpusByTenants[0] == 5);
  CHECK(shared.sharedGpusByTenants[3] == 1);
  // Without a replicas label the node's allocatable counts its replicas.
  node.labels.erase("nvidia.com/gpu.replicas");
  node.allocatable.set("nvidia.com/gpu", Quantity::fromUnits(24));
  CHECK(healthOf(node).sharedReplicas == 24);
  // Whole GPUs count none of it.
  const NodeHealth whole = healthOf(testing::makeDgxH100());
  CHECK(whole.sharedGpus == 0);
  CHECK(whole.sharedReplicas == 0);
}

TEST_CASE("a node's shared MIG devices: replicas held and left", "[core][health]") {
  // 1g.10gb devices time-sliced 4 ways: GPU0's at slice 2 free, at 3 all held; GPU1's at 0 with 3
  // held, at 1 free, at 2 all held. Five devices offer 20 replicas; 4 + 1 + 4 are left.
  const NodeInfo node = testing::slicedMigA100("time-slicing", "4", "00301f02u");
  const NodeHealth health = healthOf(node);
  CHECK(health.sharedMigReplicas == 20);
  CHECK(health.sharedMigReplicasUsed == 11);
  // Four pods the extender placed on GPU0's free device since the agent's pass hold its replicas.
  NodeUsage usage;
  for (int pod = 0; pod < 4; ++pod)
    usage.mig.push_back(MigInstanceRef{0, "1g.10gb", 2});
  CHECK(nodeHealth(*buildNodeState(node, usage, defaultPolicy())).sharedMigReplicasUsed == 15);
  // The pool's totals: what is left never below 0.
  HealthTotals totals;
  totals.add(health);
  CHECK(totals.sharedMigReplicasFree() == 9);
  // Not shared: nothing counted.
  CHECK(healthOf(testing::slicedMigA100("", "")).sharedMigReplicas == 0);
}

TEST_CASE("the GPUs and NVLink pairs the agent marks, and those pods hold", "[core][health]") {
  NodeInfo node =
      testing::makeDgx1Volta(FixtureState().withHealth("d0c11111").withUsed("10000011"));
  // Pairs 0-1 degraded, 6-7 down, 4-5 cordoned (labels-v1 pair order, 28 pairs).
  std::string marks(28, '1');
  marks[static_cast<std::size_t>(pairIndex(0, 1, 8))] = 'd';
  marks[static_cast<std::size_t>(pairIndex(6, 7, 8))] = '0';
  marks[static_cast<std::size_t>(pairIndex(4, 5, 8))] = 'c';
  node.labels.insert_or_assign("gputopo.dev/nvlh", marks);
  const NodeHealth health = healthOf(node);
  CHECK(health.failedGpus == 1);
  CHECK(health.degradedGpus == 1);
  CHECK(health.cordonedGpus == 1);
  CHECK(health.degradedLinks == 1);
  CHECK(health.downLinks == 1);
  CHECK(health.cordonedLinks == 1);
  // GPU 0 (degraded) is taken; pair 6-7 (down) has both GPUs taken, pair 0-1 only one.
  CHECK(health.degradedGpusInUse == 1);
  CHECK(health.degradedLinksInUse == 1);
  // A healthy node counts none of it.
  const NodeHealth fine = healthOf(testing::makeDgx1Volta());
  CHECK(fine.failedGpus + fine.degradedGpus + fine.cordonedGpus == 0);
  CHECK(fine.degradedLinks + fine.downLinks + fine.cordonedLinks == 0);
}

TEST_CASE("tenants per shared GPU at a quantile of the pool", "[core][health]") {
  HealthTotals totals;
  CHECK(totals.sharedTenantsAt(0.95) == 0);  // no shared GPU
  // 20 GPUs: 10 without tenants, 8 with 1, one with 2, one with 40 (the last bucket).
  totals.sharedGpus = 20;
  totals.sharedGpusByTenants[0] = 10;
  totals.sharedGpusByTenants[1] = 8;
  totals.sharedGpusByTenants[2] = 1;
  totals.sharedGpusByTenants[kTenantBuckets - 1] = 1;
  CHECK(totals.sharedTenantsAt(0.5) == 0);   // the 10th GPU
  CHECK(totals.sharedTenantsAt(0.9) == 1);   // the 18th
  CHECK(totals.sharedTenantsAt(0.95) == 2);  // the 19th
  CHECK(totals.sharedTenantsAt(1.0) == static_cast<std::int64_t>(kTenantBuckets - 1));
  totals.sharedReplicas = 10;
  totals.sharedReplicasUsed = 12;  // a stale replicas label: never below 0 free
  CHECK(totals.sharedReplicasFree() == 0);
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
