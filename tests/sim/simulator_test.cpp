// The simulator's invariants on a short synthetic run: no GPU is handed out twice, every placed pod
// fits its node at the moment it lands (checkFit on the node as it was, CPU and memory included),
// and a seed fixes the outcome.
#include <bit>
#include <catch2/catch_test_macros.hpp>
#include <map>
#include <vector>

#include "core/fit.h"
#include "core/node_state.h"
#include "policy/default_policy.h"
#include "sim/cluster_spec.h"
#include "sim/openb_csv.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "sim_test_data.h"

using namespace gte;
using namespace gte::sim;

namespace {

constexpr const char* kCluster = "hgx-a100:4,dgx1v:4,pcie4:4,pcie2:8,pcie1:2";

struct Replay {
  std::vector<SimNodeSpec> nodes;
  std::vector<SimPod> arrivals;
  SimRun run;
};

Replay replay(Chooser chooser, std::uint64_t seed, InTree inTree = InTree::kLeastAllocated) {
  Replay out;
  out.nodes = *parseClusterSpec(kCluster);
  const auto trace = parseOpenbPods(testing::syntheticTraceText());
  REQUIRE(trace.ok());
  std::int64_t capacity = 0;
  for (const SimNodeSpec& node : out.nodes) {
    capacity += node.machine->gpus;
  }
  out.arrivals = arrivalSequence(*trace, capacity, 130, seed);
  SimOptions options;
  options.chooser = chooser;
  options.inTree = inTree;
  options.seed = seed;
  out.run = simulate(out.nodes, out.arrivals, defaultPolicy(), options);
  return out;
}

const Chooser kAllChoosers[] = {Chooser::kExtender, Chooser::kLeastAllocated,
                                Chooser::kMostAllocatedGpu, Chooser::kBestFit, Chooser::kRandom};

}  // namespace

TEST_CASE("no GPU is handed out twice and every placed pod fits its node when it lands") {
  const Policy policy = defaultPolicy();
  for (const Chooser chooser : kAllChoosers) {
    INFO("chooser " << chooserName(chooser));
    const Replay r = replay(chooser, 42);
    REQUIRE(r.run.placements.size() == r.arrivals.size());
    std::vector<NodeUsage> usage(r.nodes.size());
    std::vector<GpuMask> taken(r.nodes.size(), 0);
    std::vector<std::int64_t> cpu(r.nodes.size(), 0);
    std::vector<std::int64_t> memory(r.nodes.size(), 0);
    int placed = 0;
    int failed = 0;
    for (std::size_t i = 0; i < r.arrivals.size(); ++i) {
      const SimPod& pod = r.arrivals[i];
      const PodPlacement& placement = r.run.placements[i];
      if (placement.node < 0) {
        ++failed;
        continue;
      }
      ++placed;
      const auto n = static_cast<std::size_t>(placement.node);
      const SimNodeSpec& spec = r.nodes[n];
      // The node as it was when the pod arrived, rebuilt from its labels and what landed before.
      const auto state = buildNodeState(makeTemplateNode(*spec.machine, spec.name, "gputopo.dev/"),
                                        usage[n], policy);
      PodDemand demand;
      demand.gpus = pod.gpus;
      CHECK(checkFit(demand, *state, policy).fits());
      CHECK(std::popcount(placement.gpus) == pod.gpus);
      CHECK((taken[n] & placement.gpus) == 0);
      CHECK((placement.gpus & ~state->usableMask) == 0);
      taken[n] |= placement.gpus;
      for (GpuMask rest = placement.gpus; rest != 0; rest &= rest - 1) {
        usage[n].gpus.push_back(std::countr_zero(rest));
      }
      cpu[n] += pod.cpuMilli;
      memory[n] += pod.memoryMib;
      CHECK(cpu[n] <= spec.cpuMilli);
      CHECK(memory[n] <= spec.memoryMib);
    }
    // The trace asks for 130% of the GPUs: some pods land and some cannot.
    CHECK(placed > 0);
    CHECK(failed > 0);
  }
}

TEST_CASE("a failed pod had no feasible node and a placed pod at least one") {
  const Replay r = replay(Chooser::kExtender, 43);
  for (const PodPlacement& placement : r.run.placements) {
    CHECK((placement.node < 0) == (placement.feasibleNodes == 0));
  }
}

TEST_CASE("the same seed gives the same placements; another seed changes them") {
  for (const Chooser chooser : kAllChoosers) {
    INFO("chooser " << chooserName(chooser));
    const Replay first = replay(chooser, 42);
    const Replay again = replay(chooser, 42);
    const Replay other = replay(chooser, 44);
    REQUIRE(first.run.placements.size() == again.run.placements.size());
    for (std::size_t i = 0; i < first.run.placements.size(); ++i) {
      CHECK(first.run.placements[i].node == again.run.placements[i].node);
      CHECK(first.run.placements[i].gpus == again.run.placements[i].gpus);
    }
    bool differs = other.arrivals.size() != first.arrivals.size();
    for (std::size_t i = 0; !differs && i < first.arrivals.size(); ++i) {
      differs = other.arrivals[i].name != first.arrivals[i].name ||
                other.run.placements[i].node != first.run.placements[i].node;
    }
    CHECK(differs);
  }
}

TEST_CASE("allocated GPUs never exceed capacity and grow only by placed pods") {
  const Replay r = replay(Chooser::kBestFit, 45);
  std::int64_t allocated = 0;
  for (std::size_t i = 0; i < r.arrivals.size(); ++i) {
    if (r.run.placements[i].node >= 0) {
      allocated += r.arrivals[i].gpus;
    }
    CHECK(r.run.placements[i].allocatedGpus == allocated);
    CHECK(allocated <= r.run.capacityGpus);
  }
  CHECK(r.run.capacityGpus == 98);
}

TEST_CASE("pods without GPUs follow the default scheduler's strategy when asked to") {
  // A 1-GPU pod fills node 0's CPU a little; then a CPU-only pod. MostAllocated (the extender
  // scheduler's profile) packs it next to the GPU pod; the default scheduler's LeastAllocated
  // spreads it to the empty node.
  const auto nodes = parseClusterSpec("pcie2:2");
  REQUIRE(nodes.ok());
  const std::vector<SimPod> pods = {{"gpu", 16000, 65536, 1}, {"cpu", 2000, 4096, 0}};
  SimOptions options;
  options.inTree = InTree::kMostAllocated;
  options.fragmentationAt = {};
  const SimRun packed = simulate(*nodes, pods, defaultPolicy(), options);
  options.cpuPodsInTree = InTree::kLeastAllocated;
  const SimRun spread = simulate(*nodes, pods, defaultPolicy(), options);
  REQUIRE(packed.placements[0].node == spread.placements[0].node);
  CHECK(packed.placements[1].node == packed.placements[0].node);
  CHECK(spread.placements[1].node != spread.placements[0].node);
}
