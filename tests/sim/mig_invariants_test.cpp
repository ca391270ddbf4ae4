// The simulator's MIG invariants on a short synthetic run with whole-GPU and MIG pods: no memory
// slice is handed out twice, every placed instance sits at a legal start of its profile on a GPU in
// MIG mode, whole-GPU pods never take a MIG GPU, the extender places by its fit check (it never
// fails a pod some node could host), and a seed fixes the outcome.
#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <vector>

#include "core/fit.h"
#include "core/node_state.h"
#include "policy/default_policy.h"
#include "sim/cluster_spec.h"
#include "sim/placement_metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"

using namespace gte;
using namespace gte::sim;

namespace {

constexpr const char* kCluster =
    "hgx-a100:2,hgx-a100-mig4:2,hgx-a100-mig:2,hgx-a100-mig-balanced:1,a100-pcie-mig:2,pcie2:2";

Policy dynamicMigPolicy() {
  Policy policy = defaultPolicy();
  policy.dynamicMig = true;
  return policy;
}

struct Replay {
  std::vector<SimNodeSpec> nodes;
  std::vector<SimPod> arrivals;
  SimRun run;
};

Replay replay(const Policy& policy, Chooser chooser, std::uint64_t seed) {
  Replay out;
  out.nodes = *parseClusterSpec(kCluster);
  auto mix = parseSyntheticMix("0:10,1:50,2:20,4:10,8:10");
  REQUIRE(mix.ok());
  const MigProduct& product = *findMigProduct(policy.migProducts, "NVIDIA-A100-SXM4-80GB");
  REQUIRE(
      addMigMix(*mix, 0.9, "1g.10gb:40,2g.20gb:20,3g.40gb:20,4g.40gb:10,7g.80gb:10", product).ok());
  std::int64_t capacity = 0;
  for (const SimNodeSpec& node : out.nodes) {
    capacity += node.machine->gpus;
  }
  const std::vector<SimPod> trace = syntheticPods(*mix, 400, 7);
  out.arrivals = arrivalSequence(trace, capacity, 130, seed);
  SimOptions options;
  options.chooser = chooser;
  options.seed = seed;
  out.run = simulate(out.nodes, out.arrivals, policy, options);
  return out;
}

const Chooser kAllChoosers[] = {Chooser::kExtender, Chooser::kLeastAllocated,
                                Chooser::kMostAllocatedGpu, Chooser::kBestFit, Chooser::kRandom};

}  // namespace

TEST_CASE(
    "MIG: no slice twice, legal starts on MIG GPUs, the extender's picks fit when they land") {
  const Policy policy = dynamicMigPolicy();
  for (const Chooser chooser : kAllChoosers) {
    INFO("chooser " << chooserName(chooser));
    const Replay r = replay(policy, chooser, 42);
    REQUIRE(r.run.placements.size() == r.arrivals.size());
    std::vector<std::vector<SliceMask>> slices(r.nodes.size(), std::vector<SliceMask>(8, 0));
    std::vector<NodeUsage> usage(r.nodes.size());
    int migPlaced = 0;
    int migFailed = 0;
    for (std::size_t i = 0; i < r.arrivals.size(); ++i) {
      const SimPod& pod = r.arrivals[i];
      const PodPlacement& placement = r.run.placements[i];
      if (placement.node < 0) {
        migFailed += pod.migProfile.empty() ? 0 : 1;
        // A failed MIG pod never had a legal placement under the extender; a MIG-naive chooser's
        // invalid placement went where the counts added up.
        if (chooser == Chooser::kExtender) {
          CHECK_FALSE(placement.migLegal);
          CHECK_FALSE(placement.migInvalid);
        }
        if (placement.migInvalid) {
          CHECK(placement.migCountsFit);
        }
        continue;
      }
      const auto n = static_cast<std::size_t>(placement.node);
      const NodeTemplate& machine = *r.nodes[n].machine;
      const auto before = buildNodeState(
          makeTemplateNode(machine, r.nodes[n].name, policy.labelPrefix), usage[n], policy);
      PodDemand demand;
      demand.gpus = pod.gpus;
      if (!pod.migProfile.empty()) {
        demand.mig = {{pod.migProfile, 1}};
      }
      CHECK(checkFit(demand, *before, policy).fits());
      for (GpuMask rest = placement.gpus; rest != 0; rest &= rest - 1) {
        const int gpu = std::countr_zero(rest);
        CHECK(machine.mig[static_cast<std::size_t>(gpu)] != '1');  // whole GPUs only off MIG
        usage[n].gpus.push_back(gpu);
      }
      if (pod.migProfile.empty()) {
        CHECK(placement.migGpu == -1);
        continue;
      }
      ++migPlaced;
      REQUIRE(placement.migGpu >= 0);
      REQUIRE(placement.migGpu < machine.gpus);
      const auto gpu = static_cast<std::size_t>(placement.migGpu);
      CHECK(machine.mig[gpu] == '1');
      const MigProfile& profile = *before->migProduct->findByName(pod.migProfile);
      CHECK(std::find(profile.starts.begin(), profile.starts.end(), placement.migStart) !=
            profile.starts.end());
      const SliceMask taken = sliceMask(placement.migStart, profile.slices);
      CHECK((slices[n][gpu] & taken) == 0);
      slices[n][gpu] = static_cast<SliceMask>(slices[n][gpu] | taken);
      usage[n].mig.push_back({placement.migGpu, pod.migProfile, placement.migStart});
    }
    // 130% of the GPUs arrive: MIG pods both land and fail.
    CHECK(migPlaced > 0);
    CHECK(migFailed > 0);
    const MigMetrics m = summarise(r.run, r.arrivals).mig;
    CHECK(m.placed == migPlaced);
    CHECK(m.failed == migFailed);
    CHECK(m.countsTrap <= m.failed);
    if (chooser == Chooser::kExtender) {
      CHECK(m.lost == 0);
      CHECK(m.invalid == 0);
    }
  }
}

TEST_CASE("MIG: the same seed gives the same instances") {
  const Policy policy = dynamicMigPolicy();
  for (const Chooser chooser : kAllChoosers) {
    INFO("chooser " << chooserName(chooser));
    const Replay first = replay(policy, chooser, 43);
    const Replay again = replay(policy, chooser, 43);
    REQUIRE(first.run.placements.size() == again.run.placements.size());
    for (std::size_t i = 0; i < first.run.placements.size(); ++i) {
      CHECK(first.run.placements[i].node == again.run.placements[i].node);
      CHECK(first.run.placements[i].migGpu == again.run.placements[i].migGpu);
      CHECK(first.run.placements[i].migStart == again.run.placements[i].migStart);
      CHECK(first.run.placements[i].migInvalid == again.run.placements[i].migInvalid);
    }
  }
}

TEST_CASE("MIG: with mig.dynamic off, only the static layout's instances are taken") {
  // Without dynamic MIG only existing free instances fit (the all-balanced node's), and the
  // baselines see the free instance counts, which are exact: nothing is sent where it cannot run.
  for (const Chooser chooser : kAllChoosers) {
    INFO("chooser " << chooserName(chooser));
    const Replay r = replay(defaultPolicy(), chooser, 42);
    for (std::size_t i = 0; i < r.arrivals.size(); ++i) {
      const PodPlacement& placement = r.run.placements[i];
      if (!r.arrivals[i].migProfile.empty() && placement.node >= 0) {
        CHECK(r.nodes[static_cast<std::size_t>(placement.node)].machine->name ==
              "hgx-a100-mig-balanced");
      }
    }
    const MigMetrics m = summarise(r.run, r.arrivals).mig;
    CHECK(m.placed > 0);
    CHECK(m.failed > 0);
    CHECK(m.invalid == 0);
    CHECK(m.countsTrap == 0);
  }
}
