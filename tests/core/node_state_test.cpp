// NodeState: free GPUs (labels, usage, unknown-index usage), precomputed picks per k, MIG fits,
// and the degraded states for missing or malformed labels.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/node_state.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;
using testing::FixtureState;

GpuMask maskOf(std::initializer_list<int> gpus) {
  GpuMask mask = 0;
  for (int gpu : gpus) {
    mask |= bitOf(gpu);
  }
  return mask;
}

TEST_CASE("free GPUs come from labels and the extender's own usage", "[snapshot][node-state]") {
  const Policy policy = defaultPolicy();
  const NodeInfo node =
      testing::makeDgx1Volta(FixtureState().withName("dgx1").withUsed("00100100"));

  const auto plain = buildNodeState(node, {}, policy);
  CHECK(plain->status == TopologyStatus::kKnown);
  CHECK(plain->gpuCount == 8);
  CHECK(plain->usableCount == 8);
  CHECK(plain->freeMask == maskOf({0, 1, 3, 4, 6, 7}));
  CHECK(plain->largestNvlinkDomain == 6);

  NodeUsage usage;
  usage.gpus = {6};
  const auto withUsage = buildNodeState(node, usage, policy);
  CHECK(withUsage->freeMask == maskOf({0, 1, 3, 4, 7}));

  // Indices unknown: the device plugin would have taken the first available GPU for a 1-GPU pod.
  NodeUsage unknown;
  unknown.unknownGpus = 1;
  CHECK(buildNodeState(node, unknown, policy)->freeMask == maskOf({1, 3, 4, 6, 7}));
  unknown.unknownGpus = 9;
  CHECK(buildNodeState(node, unknown, policy)->freeCount == 0);
}

TEST_CASE("per-k picks: device plugin, NUMA-aligned and best set", "[snapshot][node-state]") {
  const Policy policy = defaultPolicy();
  const auto state =
      buildNodeState(testing::makeDgx1Volta(FixtureState().withUsed("00100100")), {}, policy);
  REQUIRE(state->whole.size() == 7);
  // Free {0,1,3,4,6,7}. Best partition into pairs: {0,4} 210 + {1,3} 130 + {6,7} 250 = 590; the
  // device plugin returns its best group {6,7} (NV2 + PIX).
  const WholeGpuOptions& two = state->whole[2];
  CHECK(two.devicePlugin.gpus == maskOf({6, 7}));
  CHECK(two.devicePlugin.weakest == LinkClass::kNvlink);
  CHECK(two.devicePlugin.singleNuma);
  CHECK(two.best.gpus == maskOf({6, 7}));
  CHECK(two.bestScore == 250);
  // NUMA 0 holds free {0,1,3}: padded [0,1,3,nil] -> {0,3}+{1,nil} = 230 wins.
  CHECK(two.numaAligned.gpus == maskOf({0, 3}));
  // Taking {0,3} leaves 1 with no free NVLink peer (1-0, 1-3 were its free peers; 1-2 and 1-5
  // are used): stranded.
  CHECK(two.numaAligned.stranded == 1);
  const WholeGpuOptions& four = state->whole[4];
  CHECK(gpuCountOf(four.devicePlugin.gpus) == 4);
  CHECK(four.bestSingleNuma.gpus == 0);  // no NUMA node has 4 free GPUs
  // With every GPU free, NUMA 0 holds the NVLink quad {0,1,2,3}.
  REQUIRE(state->capacity->size() == 9);
  CHECK((*state->capacity)[4].numaAlignedPossible);
  CHECK((*state->capacity)[4].numaAlignedWeakest == LinkClass::kNvlink);
  CHECK_FALSE((*state->capacity)[5].numaAlignedPossible);
}

// Every 16-GPU state's device-plugin picks share one work allowance. A DGX-2 (a PCIe switch tree)
// stays well inside it, free or partly used, and its picks are exact; a node whose pair facts
// follow no hierarchy spends it and is marked approximate (the observer logs such nodes), with a
// pick of the right size for every k all the same.
TEST_CASE("16-GPU node states: exact on a switch tree, approximate without structure",
          "[snapshot][node-state]") {
  const Policy policy = defaultPolicy();
  for (const char* used : {"0000000000000000", "1000100000000001", "0110000000010000"}) {
    const auto dgx2 = buildNodeState(testing::makeDgx2(FixtureState().withUsed(used)), {}, policy);
    INFO("used " << used);
    CHECK_FALSE(dgx2->devicePluginApproximate);
  }
  const auto patternless = buildNodeState(testing::makePatternless16(), {}, policy);
  REQUIRE(patternless->status == TopologyStatus::kKnown);
  CHECK(patternless->devicePluginApproximate);
  REQUIRE(patternless->whole.size() == 17);
  for (int k = 1; k <= 16; ++k) {
    CHECK(gpuCountOf(patternless->whole[static_cast<std::size_t>(k)].devicePlugin.gpus) == k);
  }
}

TEST_CASE("unhealthy, cordoned and MIG-mode GPUs are not usable", "[snapshot][node-state]") {
  const Policy policy = defaultPolicy();
  const auto state = buildNodeState(
      testing::makeDgxA100(
          FixtureState().withHealth("10c11111").withUsed("0000m000").withMig("00001000")),
      {}, policy);
  CHECK(state->usableMask == maskOf({0, 3, 5, 6, 7}));
  CHECK(state->freeCount == 5);
  CHECK(state->capacity->size() == 6);
}

TEST_CASE("static MIG fits follow existing free instances", "[snapshot][node-state][mig]") {
  const Policy policy = defaultPolicy();
  // labels-v1 worked example: GPU0 2g@0 used, 1g@2 free, 1g@3 used, 3g@4 free; GPU1 seven 1g.
  const NodeInfo node = testing::makeDgxA100(FixtureState()
                                                 .withUsed("mm010000")
                                                 .withMig("11000000")
                                                 .withMigTokens(0, "10u02f03u24f")
                                                 .withMigTokens(1, "00f01f02u03f04f05u06f"));
  const auto state = buildNodeState(node, {}, policy);
  REQUIRE(state->migProduct.has_value());
  CHECK(state->migProduct->name == "A100-80GB");
  CHECK(state->freeCount == 5);  // GPUs 2,4,5,6,7
  const MigProfileFit* oneG = state->migFit("1g.10gb");
  REQUIRE(oneG != nullptr);
  CHECK(oneG->gpu == 0);
  CHECK(oneG->start == 2);
  CHECK(oneG->existing);
  const MigProfileFit* threeG = state->migFit("3g.40gb");
  CHECK(threeG->gpu == 0);
  CHECK(threeG->start == 4);
  const MigProfileFit* twoG = state->migFit("2g.20gb");
  CHECK(twoG->gpu < 0);            // the only 2g instance is used...
  CHECK(twoG->possibleWhenEmpty);  // ...but preemption could free it
  const MigProfileFit* fourG = state->migFit("4g.40gb");
  CHECK(fourG->gpu < 0);
  CHECK_FALSE(fourG->possibleWhenEmpty);  // static MIG: no 4g instance exists anywhere
  CHECK(state->migSlicesTotal == 16);
  CHECK(state->migSlicesInUse == 2 + 1 + 1 + 1);  // 2g@0, 1g@3 on GPU0; 1g@2, 1g@5 on GPU1

  // The extender took GPU0's free 1g@2: the next 1g comes from GPU1.
  NodeUsage usage;
  usage.mig = {{0, "1g.10gb", 2}};
  const auto taken = buildNodeState(node, usage, policy);
  CHECK(taken->migFit("1g.10gb")->gpu == 1);
  CHECK(taken->migFit("1g.10gb")->start == 0);
}

TEST_CASE("dynamic MIG fits take the placement that keeps most open",
          "[snapshot][node-state][mig]") {
  Policy policy = defaultPolicy();
  policy.dynamicMig = true;
  // GPU0 MIG-enabled and empty; GPU1 holds 1g@0 and 1g@5 (six free slices, no 3g placement).
  const NodeInfo node = testing::makeDgxA100(
      FixtureState().withUsed("mm000000").withMig("11000000").withMigTokens(1, "00u05u"));
  const auto state = buildNodeState(node, {}, policy);
  const MigProfileFit* threeG = state->migFit("3g.40gb");
  REQUIRE(threeG != nullptr);
  CHECK(threeG->gpu == 0);  // GPU1 has six free slices but no legal 3g start
  CHECK_FALSE(threeG->existing);
  // A 1g goes where it blocks the least placement value. An empty A100's open placements are
  // worth 48 (1g 7, 1g+me 7, 1g.20gb 8, 2g 6, 3g 8, 4g 4, 7g 8); 1g@6 on empty GPU0 blocks 16.
  // On GPU1 (slices 0 and 5 taken) 1g@4 blocks only 1g@4 and 1g+me@4: 2. GPU1 wins, and GPU0
  // stays whole for a 7g. Quality: 1000 - 2 * 1000 / 48 = 959.
  const MigProfileFit* oneG = state->migFit("1g.10gb");
  CHECK(oneG->gpu == 1);
  CHECK(oneG->start == 4);
  CHECK(oneG->qualityPermille == 959);
  // The `+me` profile is capped at one per GPU.
  NodeUsage usage;
  usage.mig = {{0, "1g.10gb+me", 6}, {1, "1g.10gb.me", 6}};
  CHECK(buildNodeState(node, usage, policy)->migFit("1g.10gb.me")->gpu < 0);
}

TEST_CASE("malformed labels keep serving with unknown topology", "[snapshot][node-state]") {
  const Policy policy = defaultPolicy();
  NodeInfo node = testing::makeDgx1Volta(FixtureState().withName("broken"));
  node.labels["gputopo.dev/pci"] = "PHH";
  const auto state = buildNodeState(node, {}, policy);
  CHECK(state->status == TopologyStatus::kMalformed);
  CHECK_THAT(state->topologyError, ContainsSubstring("node broken: gputopo.dev/pci: length 3"));
  CHECK(state->gpuCount == 8);  // from allocatable
  CHECK(state->freeCount == 8);
  CHECK_FALSE(state->linksKnown());
  CHECK(state->whole[2].devicePlugin.weakest == LinkClass::kUnknown);
}

TEST_CASE("nodes without labels-v1 or GPUs", "[snapshot][node-state]") {
  const Policy policy = defaultPolicy();
  const auto gfd = buildNodeState(testing::makeGfdNode("gfd", 4, "NVIDIA-L40S"), {}, policy);
  CHECK(gfd->status == TopologyStatus::kUnknown);
  CHECK(gfd->freeCount == 4);
  CHECK(gfd->whole[1].devicePlugin.gpus == maskOf({0}));
  NodeUsage usage;
  usage.unknownGpus = 3;
  CHECK(buildNodeState(testing::makeGfdNode("gfd", 4, "NVIDIA-L40S"), usage, policy)->freeCount ==
        1);

  NodeInfo cpu;
  cpu.name = "cpu";
  const auto none = buildNodeState(cpu, {}, policy);
  CHECK(none->gpuCount == 0);
  CHECK(none->freeCount == 0);
  CHECK(none->whole.size() == 1);
}

// Found by fuzz_node_labels (the extender ended on a full-Node request carrying such a node).
TEST_CASE("a negative allocatable GPU count yields a node without GPUs", "[snapshot][node-state]") {
  const Policy policy = defaultPolicy();
  NodeInfo node;
  node.name = "neg";
  node.labels["nvidia.com/gpu.product"] = "NVIDIA-A10";
  node.allocatable.set("nvidia.com/gpu", Quantity::fromUnits(-2));
  const auto fallback = buildNodeState(node, {}, policy);
  // Malformed, not merely unknown: the cache logs and counts a node whose GPU count does not read.
  CHECK(fallback->status == TopologyStatus::kMalformed);
  CHECK_THAT(fallback->topologyError, ContainsSubstring("negative GPU count"));
  CHECK(fallback->gpuCount == 0);
  CHECK(fallback->freeCount == 0);

  // Malformed labels-v1 fall back to the same count.
  NodeInfo labelled = testing::makeDgx1Volta(FixtureState().withName("neg-v1"));
  labelled.labels["gputopo.dev/pci"] = "PHH";
  labelled.allocatable.set("nvidia.com/gpu", Quantity::fromUnits(-2));
  const auto malformed = buildNodeState(labelled, {}, policy);
  CHECK(malformed->status == TopologyStatus::kMalformed);
  CHECK(malformed->gpuCount == 0);
  CHECK(malformed->whole.size() == 1);
}

// A GPU Feature Discovery count that is no number made a node of 0 GPUs that nobody heard of.
TEST_CASE("a GFD count that does not read makes the node malformed, with no GPUs",
          "[snapshot][node-state]") {
  const Policy policy = defaultPolicy();
  NodeInfo node;
  node.name = "gfd";
  node.labels["nvidia.com/gpu.count"] = "lots";
  node.labels["nvidia.com/gpu.product"] = "NVIDIA-A10";
  node.allocatable.set("nvidia.com/gpu", Quantity::fromUnits(2));
  const auto state = buildNodeState(node, {}, policy);
  CHECK(state->status == TopologyStatus::kMalformed);
  CHECK_THAT(state->topologyError, ContainsSubstring("nvidia.com/gpu.count: not a decimal count"));
  CHECK(state->gpuCount == 0);
}

}  // namespace
}  // namespace gte
