// The simulator's DRA mode: slices derived from the machine templates, the first-fit device choice
// inside a node (against the device plugin's pick on the same sequence), the extender steering the
// node choice so that first-fit lands on an NVLink pair, and the invariants of a longer run.
#include <algorithm>
#include <bit>
#include <catch2/catch_test_macros.hpp>
#include <vector>

#include "policy/default_policy.h"
#include "sim/cluster_spec.h"
#include "sim/openb_csv.h"
#include "sim/placement_metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "sim_test_data.h"

using namespace gte;
using namespace gte::sim;

namespace {

SimRun replay(const char* cluster, const std::vector<int>& podGpus, Chooser chooser,
              DraDeviceOrder order, InTree inTree = InTree::kLeastAllocated, std::uint64_t seed = 1,
              DraPodForm form = DraPodForm::kExtendedResource) {
  const std::vector<SimNodeSpec> nodes = *parseClusterSpec(cluster);
  std::vector<SimPod> pods;
  for (const int gpus : podGpus) {
    pods.emplace_back("pod", 1000, 1024, gpus);
  }
  SimOptions options;
  options.chooser = chooser;
  options.inTree = inTree;
  options.draOrder = order;
  options.seed = seed;
  options.draPods = form;
  return simulate(nodes, pods, defaultPolicy(), options);
}

GpuMask mask(std::initializer_list<int> gpus) {
  GpuMask out = 0;
  for (const int gpu : gpus)
    out |= GpuMask{1} << gpu;
  return out;
}

}  // namespace

TEST_CASE("a template's PCIe roots group the GPUs whose pci level meets below one host bridge") {
  // hgx-a100 pci QSSSSSSSSSSSSQSSSSSSSSQSSSSQ: only (0,1), (2,3), (4,5), (6,7) are PXB.
  CHECK(pcieRootGroups(*findNodeTemplate("hgx-a100")) == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  // dgx1v pci PHHSSSSHHSSSSPSSSSSSSSPHHHHP: PIX/PHB inside 0-3 and inside 4-7, SYS across.
  CHECK(pcieRootGroups(*findNodeTemplate("dgx1v")) == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  // pcie4 PHHHHP: two PIX pairs on one host bridge.
  CHECK(pcieRootGroups(*findNodeTemplate("pcie4")) == std::vector<int>{0, 0, 0, 0});
  CHECK(pcieRootGroups(*findNodeTemplate("pcie1")) == std::vector<int>{0});
}

TEST_CASE(
    "on one DGX-1V listed by index, first-fit hands a 2-GPU pod a SYS pair the device "
    "plugin would not") {
  // Pods of 1, 1, 1 and 2 GPUs on one node. First-fit in the order gpu-0 ... gpu-7: the 1-GPU
  // pods take 0, 1, 2; the 2-GPU pod takes the next two free, 3 and 4: nvl[(3,4)] = '0' and
  // pci[(3,4)] = 'S' (GPU 3 on socket 0, GPU 4 on socket 1), so its weakest link is SYS.
  for (const Chooser chooser : {Chooser::kExtender, Chooser::kLeastAllocated}) {
    INFO(chooserName(chooser));
    const SimRun dra = replay("dgx1v:1", {1, 1, 1, 2}, chooser, DraDeviceOrder::kIndex);
    REQUIRE(dra.placements.size() == 4);
    CHECK(dra.placements[0].gpus == mask({0}));
    CHECK(dra.placements[1].gpus == mask({1}));
    CHECK(dra.placements[2].gpus == mask({2}));
    CHECK(dra.placements[3].gpus == mask({3, 4}));
    CHECK(dra.placements[3].weakest == LinkClass::kSys);
    // With one node the first-fit set is the only offer: not a node-choice miss.
    CHECK(dra.placements[3].bestOffered == LinkClass::kSys);
    std::vector<SimPod> pods(4, SimPod("pod", 1000, 1024, 1));
    pods[3].gpus = 2;
    const RunMetrics metrics = summarise(dra, pods);
    REQUIRE(metrics.bySize.size() == 2);
    CHECK(metrics.bySize[1].fullyNvlink == 0);
    CHECK(metrics.bySize[1].crossSocket == 1);
    CHECK(metrics.bySize[1].missed == 0);
  }
  // The device plugin on the same sequence keeps NVLink pairs: its 2-GPU pick is NVLink-joined.
  const SimRun plugin =
      replay("dgx1v:1", {1, 1, 1, 2}, Chooser::kLeastAllocated, DraDeviceOrder::kOff);
  CHECK(plugin.placements[3].weakest == LinkClass::kNvlink);
}

TEST_CASE("the extender steers a 2-GPU pod to the node where first-fit takes an NVLink pair") {
  // Two DGX-1V listed by index. A 3-GPU pod takes gpu 0, 1, 2 of one node (all NVLink: nvl
  // (0,1) = 1, (0,2) = 1, (1,2) = 2). For the 2-GPU pod, first-fit gives 3 and 4 (SYS) on that
  // node and 0 and 1 (NV1) on the empty one.
  // BestFit packs (3 GPUs left against 6) and gets the SYS pair: a miss.
  const SimRun packed = replay("dgx1v:2", {3, 2}, Chooser::kBestFit, DraDeviceOrder::kIndex);
  REQUIRE(packed.placements[0].node >= 0);
  CHECK(packed.placements[0].gpus == mask({0, 1, 2}));
  CHECK(packed.placements[0].weakest == LinkClass::kNvlink);
  CHECK(packed.placements[1].node == packed.placements[0].node);
  CHECK(packed.placements[1].gpus == mask({3, 4}));
  CHECK(packed.placements[1].weakest == LinkClass::kSys);
  CHECK(packed.placements[1].bestOffered == LinkClass::kNvlink);
  // The extender, even with in-tree MostAllocated pulling to the fuller node, scores each node by
  // its first-fit set: the empty node's NVLink pair wins.
  for (const InTree inTree : {InTree::kMostAllocated, InTree::kLeastAllocated, InTree::kNone}) {
    INFO(inTreeName(inTree));
    const SimRun steered =
        replay("dgx1v:2", {3, 2}, Chooser::kExtender, DraDeviceOrder::kIndex, inTree);
    CHECK(steered.placements[1].node != steered.placements[0].node);
    CHECK(steered.placements[1].gpus == mask({0, 1}));
    CHECK(steered.placements[1].weakest == LinkClass::kNvlink);
  }
}

TEST_CASE("the shuffled device order is the seed's: fixed for a seed, different across seeds") {
  // A 1-GPU pod on one DGX-1V gets the first device of the node's slice.
  std::vector<GpuMask> first;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const SimRun a = replay("dgx1v:1", {1}, Chooser::kRandom, DraDeviceOrder::kShuffled,
                            InTree::kLeastAllocated, seed);
    const SimRun b = replay("dgx1v:1", {1}, Chooser::kRandom, DraDeviceOrder::kShuffled,
                            InTree::kLeastAllocated, seed);
    CHECK(a.placements[0].gpus == b.placements[0].gpus);
    first.push_back(a.placements[0].gpus);
  }
  std::sort(first.begin(), first.end());
  // 16 draws of one GPU in 8: the chance that all agree is 8^-15.
  CHECK(std::unique(first.begin(), first.end()) - first.begin() > 1);
}

TEST_CASE(
    "a DRA run hands no GPU out twice and the extender misses no link class first-fit "
    "offered elsewhere") {
  const std::vector<SimNodeSpec> nodes = *parseClusterSpec("hgx-a100:3,dgx1v:3,pcie4:3,pcie2:4");
  const auto trace = parseOpenbPods(testing::syntheticTraceText());
  REQUIRE(trace.ok());
  std::int64_t capacity = 0;
  for (const SimNodeSpec& node : nodes)
    capacity += node.machine->gpus;
  for (const auto& [chooser, form] :
       {std::pair{Chooser::kExtender, DraPodForm::kExtendedResource},
        std::pair{Chooser::kMostAllocatedGpu, DraPodForm::kExtendedResource},
        std::pair{Chooser::kExtender, DraPodForm::kClaimTemplate},
        std::pair{Chooser::kLeastAllocated, DraPodForm::kClaimTemplate}}) {
    INFO(chooserName(chooser) << " " << draPodFormName(form));
    const std::vector<SimPod> arrivals = arrivalSequence(*trace, capacity, 130, 42);
    SimOptions options;
    options.chooser = chooser;
    options.draPods = form;
    options.draOrder = DraDeviceOrder::kShuffled;
    options.seed = 42;
    const SimRun run = simulate(nodes, arrivals, defaultPolicy(), options);
    CHECK(run.capacityGpus == capacity);
    std::vector<GpuMask> taken(nodes.size(), 0);
    std::int64_t placedGpus = 0;
    for (std::size_t i = 0; i < run.placements.size(); ++i) {
      const PodPlacement& p = run.placements[i];
      if (p.node < 0 || arrivals[i].gpus == 0) continue;
      CHECK(std::popcount(p.gpus) == arrivals[i].gpus);
      CHECK((taken[static_cast<std::size_t>(p.node)] & p.gpus) == 0);
      taken[static_cast<std::size_t>(p.node)] |= p.gpus;
      placedGpus += arrivals[i].gpus;
      if (chooser == Chooser::kExtender) CHECK_FALSE(p.weakest < p.bestOffered);
    }
    CHECK(placedGpus == run.placements.back().allocatedGpus);
    CHECK(placedGpus > capacity * 3 / 4);
  }
}

TEST_CASE("claim-template pods: first-fit takes the same-pcieRoot tier inside the node") {
  // The DGX-1V sequence above with the 2-GPU pod asking through the template: GPUs 0, 1, 2 are
  // taken; the roots are {0-3} and {4-7}. Same-pcieRoot tier, first pair by position: GPU 3 has
  // no free root-0 partner, so 4 and 5 (nvl (4,5) = 1): NVLink, where nvidia.com/gpu got 3, 4.
  for (const Chooser chooser : {Chooser::kExtender, Chooser::kLeastAllocated}) {
    INFO(chooserName(chooser));
    const SimRun run = replay("dgx1v:1", {1, 1, 1, 2}, chooser, DraDeviceOrder::kIndex,
                              InTree::kLeastAllocated, 1, DraPodForm::kClaimTemplate);
    CHECK(run.placements[3].gpus == mask({4, 5}));
    CHECK(run.placements[3].weakest == LinkClass::kNvlink);
  }
}

TEST_CASE("claim-template pods: kube-scheduler's DRA score prefers the node with an earlier tier") {
  // One HGX A100 and one DGX-1V, a 4-GPU pod of 1 core and 1 GiB, the default scheduler.
  // LeastAllocated + BalancedAllocation: HGX (99 + 99) / 2 + 99 = 198, DGX-1V (98 + 99) / 2 + 99
  // = 197. The HGX's roots and NUMA nodes hold pairs, so its claim falls to tier 2 (any): DRA
  // score 2 x 100 x (8 - 2) / 8 = 150; the DGX-1V's root {0-3} holds four: tier 0, 200.
  // nvidia.com/gpu: the HGX wins (198 > 197); the template: the DGX-1V (397 > 348), GPUs 0-3.
  const SimRun plain =
      replay("hgx-a100:1,dgx1v:1", {4}, Chooser::kLeastAllocated, DraDeviceOrder::kIndex);
  CHECK(plain.placements[0].node == 0);
  const SimRun shaped =
      replay("hgx-a100:1,dgx1v:1", {4}, Chooser::kLeastAllocated, DraDeviceOrder::kIndex,
             InTree::kLeastAllocated, 1, DraPodForm::kClaimTemplate);
  CHECK(shaped.placements[0].node == 1);
  CHECK(shaped.placements[0].gpus == mask({0, 1, 2, 3}));
  CHECK(shaped.placements[0].weakest == LinkClass::kNvlink);
}
