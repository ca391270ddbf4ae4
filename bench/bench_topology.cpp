// Micro-benchmarks of the topology engine: node-state precompute (per node change) and the
// per-node request path (checkFit + scoreNode). Plain std::chrono, medians of repeated runs.
// Build: target bench_topology (needs gte_filter, gte_prioritize, gte_test_support).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/fit.h"
#include "core/node_state.h"
#include "core/score_node.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace {

using Clock = std::chrono::steady_clock;

// Median nanoseconds per call of `body` over `rounds` rounds of `calls` calls.
double medianNanos(int rounds, int calls, const std::function<void()>& body) {
  std::vector<double> samples;
  for (int r = 0; r < rounds; ++r) {
    const auto begin = Clock::now();
    for (int c = 0; c < calls; ++c) {
      body();
    }
    const auto elapsed = std::chrono::duration<double, std::nano>(Clock::now() - begin).count();
    samples.push_back(elapsed / calls);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

void benchNodeState(const char* name, const gte::NodeInfo& node, const gte::Policy& policy) {
  const double ns = medianNanos(7, 5, [&] { (void)gte::buildNodeState(node, {}, policy); });
  std::printf("buildNodeState %-28s %10.1f us\n", name, ns / 1000.0);
}

// A node whose labels give only the schema version and the GPU count: no links, no NUMA.
gte::NodeInfo sizeOnlyNode(int gpus) {
  gte::NodeInfo node = gte::testing::makeGfdNode("size-only", gpus, "NVIDIA-H100");
  node.labels = {{"gputopo.dev/v", "1"}, {"gputopo.dev/n", std::to_string(gpus)}};
  return node;
}

void benchRequestPath(const char* name, const gte::NodeInfo& node, const gte::PodInfo& pod,
                      const gte::Policy& policy) {
  const auto state = gte::buildNodeState(node, {}, policy);
  const gte::PodDemand demand = *gte::parsePodDemand(pod, policy);
  int sink = 0;
  const double ns = medianNanos(9, 20000, [&] {
    const gte::FitOutcome outcome = gte::checkFit(demand, *state, policy);
    sink += outcome.fits() ? gte::scoreNode(demand, *state, policy) : 0;
  });
  std::printf("filter+score   %-28s %10.1f ns (checksum %d)\n", name, ns, sink % 7);
}

}  // namespace

int main() {
  using gte::testing::FixtureState;
  gte::Policy policy = gte::defaultPolicy();
  benchNodeState("DGX H100 (8 GPUs)", gte::testing::makeDgxH100(), policy);
  benchNodeState("DGX-1V (8 GPUs, 2 used)",
                 gte::testing::makeDgx1Volta(FixtureState().withUsed("00100100")), policy);
  benchNodeState("4x L40S", gte::testing::make4xPcieL40s(), policy);
  benchNodeState("DGX-2 (16 GPUs)", gte::testing::makeDgx2(), policy);
  benchNodeState("DGX-2 (16 GPUs, 3 used)",
                 gte::testing::makeDgx2(FixtureState().withUsed("1000100000000001")), policy);
  benchNodeState("16 GPUs, only v and n", sizeOnlyNode(16), policy);
  benchNodeState("16 GPUs, links with no pattern", gte::testing::makePatternless16(), policy);
  benchNodeState("16 GPUs, GFD count only", gte::testing::makeGfdNode("g", 16, "NVIDIA-H100"),
                 policy);

  benchRequestPath("4 GPUs nvlink on DGX H100", gte::testing::makeDgxH100(),
                   gte::testing::makeGpuPod("p", 4, {{"gputopo.dev/min-link", "nvlink"}}), policy);
  benchRequestPath("1 GPU on DGX-1V",
                   gte::testing::makeDgx1Volta(FixtureState().withUsed("00100100")),
                   gte::testing::makeGpuPod("p", 1), policy);
  policy.dynamicMig = true;
  benchRequestPath(
      "MIG 1g on DGX A100",
      gte::testing::makeDgxA100(FixtureState().withUsed("m0000000").withMig("10000000")),
      gte::testing::makeMigPod("m", {{"1g.10gb", 1}}), policy);
  benchRequestPath(
      "MIG 3x 1g on DGX A100",
      gte::testing::makeDgxA100(FixtureState().withUsed("m0000000").withMig("10000000")),
      gte::testing::makeMigPod("m", {{"1g.10gb", 3}}), policy);
  return 0;
}
