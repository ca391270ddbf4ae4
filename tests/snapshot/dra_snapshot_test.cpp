// The snapshot with DRA: each DRA node's device order, mapping and class matches computed when its
// slices, its allocated devices or the classes change, and only then; the precomputed answers of
// `nvidia.com/gpu: N` pods follow DRA's pick; claim pods decide on the snapshot's candidates with
// the snapshot's classes and claims. Fixtures: an HGX H100 (slice order 5 2 7 0 3 6 1 4) and the
// same 8x A100 PCIe box published with an NVLink pair first and with a PCIe pair first, beside a
// device-plugin node.
#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <string>

#include "core/node_decider.h"
#include "core/pod_demand.h"
#include "dra_placement/dra_node_state.h"
#include "policy/default_policy.h"
#include "snapshot/cluster_snapshot_builder.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

struct Cluster {
  testing::DraCluster dra;
  ClusterSnapshotBuilder builder{std::make_shared<const Policy>(defaultPolicy())};

  Cluster() {
    dra.addSlice("hgx-h100-slice.json");
    dra.addSlice("a100-nvlink-first-slice.json");
    dra.addSlice("a100-pcie-first-slice.json");
    dra.addClaim(testing::draClaim("claim-2-gpus.json"));
    const auto draOnly = [](const std::string& name) {
      return FixtureState().withName(name).withIdentities().withoutDevicePlugin();
    };
    builder.upsertNode(testing::makeDgxH100(draOnly("hgx-h100-a")));
    builder.upsertNode(testing::makeA100PcieBridged(draOnly("a100-nvlink-first")));
    builder.upsertNode(testing::makeA100PcieBridged(draOnly("a100-pcie-first")));
    builder.upsertNode(testing::makeDgxH100(FixtureState().withName("device-plugin")));
    builder.setDra(&dra.slices, &dra.allocated, dra.objects);
    builder.setSynced(true);
  }
};

// As resolveNodes makes it in NodeNames mode: the state and its precomputed answers.
NodeCandidate candidate(const ClusterSnapshot& snapshot, const std::string& name) {
  NodeCandidate c;
  c.name = name;
  const std::string names[] = {name};
  snapshot.nodes.findAll(names, [&](std::size_t, const NodeStateShard::Found& found) {
    c.state = found.state;
    c.plain = found.plain;
  });
  return c;
}

TEST_CASE("DRA nodes in the snapshot: device order, mapping, allocator", "[snapshot][dra]") {
  Cluster cluster;
  const auto snapshot = cluster.builder.build();
  REQUIRE(snapshot->dra);
  const NodeState* h100 = snapshot->find("hgx-h100-a");
  REQUIRE(h100 != nullptr);
  REQUIRE(h100->dra);
  CHECK(h100->allocator == GpuAllocator::kDra);
  CHECK(h100->dra->plainOrder == std::vector<int>{5, 2, 7, 0, 3, 6, 1, 4});
  const NodeState* plugin = snapshot->find("device-plugin");
  CHECK(plugin->dra == nullptr);  // no slice serves it
  CHECK(plugin->allocator == GpuAllocator::kDevicePlugin);
}

TEST_CASE("plain nvidia.com/gpu pods: the precomputed answers follow DRA's pick",
          "[snapshot][dra]") {
  Cluster cluster;
  const auto snapshot = cluster.builder.build();
  const Policy& policy = *snapshot->policy;
  const auto demand = parsePodDemand(testing::makeGpuPod("p", 2), policy, snapshot->dra.get());
  REQUIRE(demand.ok());
  NodeDecider decider(*demand, policy);
  const NodeCandidate nvlink = candidate(*snapshot, "a100-nvlink-first");
  const NodeCandidate pcie = candidate(*snapshot, "a100-pcie-first");
  REQUIRE(nvlink.plain != nullptr);
  // The answers a request reads equal checkFit/scoreTerms on the state: GPUs 0+2 (NVLink) vs 0+1.
  CHECK(decider.decide(nvlink, DecisionPart::kScore).terms.linkQuality == 1200);
  CHECK(decider.decide(pcie, DecisionPart::kScore).terms.linkQuality == 400);
  CHECK(decider.decide(nvlink, DecisionPart::kScore).terms.linkQuality ==
        scoreTerms(*demand, *nvlink.state).linkQuality);
  CHECK(decider.decide(nvlink, DecisionPart::kScore).score >
        decider.decide(pcie, DecisionPart::kScore).score);
}

TEST_CASE("claim pods on the snapshot: the NVLink node wins, the device-plugin node cannot",
          "[snapshot][dra]") {
  Cluster cluster;
  const auto snapshot = cluster.builder.build();
  const Policy& policy = *snapshot->policy;
  const auto demand = parsePodDemand(testing::makeClaimPod("p", "ml", {{"gpus", "train-0-gpus"}}),
                                     policy, snapshot->dra.get());
  REQUIRE(demand.ok());
  REQUIRE(demand->draClaims());
  NodeDecider decider(*demand, policy);
  const NodeCandidate nvlink = candidate(*snapshot, "a100-nvlink-first");
  const NodeCandidate pcie = candidate(*snapshot, "a100-pcie-first");
  const NodeCandidate plugin = candidate(*snapshot, "device-plugin");
  CHECK(decider.decide(nvlink, DecisionPart::kVerdict).fit.fits());
  CHECK(decider.decide(pcie, DecisionPart::kVerdict).fit.fits());
  CHECK_FALSE(decider.decide(plugin, DecisionPart::kVerdict).fit.fits());
  CHECK(decider.decide(nvlink, DecisionPart::kScore).score >
        decider.decide(pcie, DecisionPart::kScore).score);
}

TEST_CASE("an allocation re-derives its node only, and a release frees the GPUs",
          "[snapshot][dra]") {
  Cluster cluster;
  const auto before = cluster.builder.build();
  CHECK(before->find("hgx-h100-a")->freeCount == 8);
  const auto claim = testing::draClaim("claim-allocated.json");
  cluster.dra.addClaim(claim);
  bool everyNode = false;
  const auto nodes = cluster.dra.slices.nodesOfPool("gpu.nvidia.com", "hgx-h100-a", everyNode);
  REQUIRE(nodes == std::vector<std::string>{"hgx-h100-a"});
  for (const std::string& node : nodes)
    CHECK(cluster.builder.draNodeChanged(node));
  const auto held = cluster.builder.build();
  CHECK(cluster.builder.lastBuildStats().rebuilt == 1);
  CHECK(held->find("hgx-h100-a")->freeCount == 7);
  // Unchanged nodes are shared by pointer.
  CHECK(held->find("a100-pcie-first") == before->find("a100-pcie-first"));
  cluster.dra.allocated.removeClaim(*claim);
  cluster.builder.draNodeChanged("hgx-h100-a");
  CHECK(cluster.builder.build()->find("hgx-h100-a")->freeCount == 8);
  // A pod bound (charges) re-derives the node without re-gathering its devices.
  const auto state = cluster.builder.build()->find("hgx-h100-a");
  const DraNodeState* draBefore = state->dra.get();
  cluster.builder.setCharges("hgx-h100-a", std::make_shared<const NodeCharges>());
  cluster.builder.upsertNode(testing::makeDgxH100(
      FixtureState().withName("hgx-h100-a").withIdentities().withoutDevicePlugin()));
  CHECK(cluster.builder.build()->find("hgx-h100-a")->dra.get() == draBefore);
}

TEST_CASE("new classes re-derive every DRA node; DRA off clears it", "[snapshot][dra]") {
  Cluster cluster;
  cluster.builder.build();
  // Classes without one backing nvidia.com/gpu: DRA nodes cannot take such pods any more.
  auto objects = std::make_shared<dra::DraObjectMaps>(std::make_shared<const dra::ClassCatalog>());
  cluster.builder.setDra(&cluster.dra.slices, &cluster.dra.allocated, objects);
  const auto rebuilt = cluster.builder.build();
  CHECK(cluster.builder.lastBuildStats().rebuilt == 4);
  CHECK(rebuilt->find("hgx-h100-a")->dra->plainClass == -1);
  const auto demand =
      parsePodDemand(testing::makeGpuPod("p", 1), *rebuilt->policy, rebuilt->dra.get());
  REQUIRE(demand.ok());
  NodeDecider decider(*demand, *rebuilt->policy);
  CHECK(decider.decide(candidate(*rebuilt, "hgx-h100-a"), DecisionPart::kVerdict).fit.reason ==
        FitReason::kNoGpus);
  cluster.builder.setDra(nullptr, nullptr, nullptr);
  const auto off = cluster.builder.build();
  CHECK(off->dra == nullptr);
  CHECK(off->find("hgx-h100-a")->dra == nullptr);
}

}  // namespace
}  // namespace gte
