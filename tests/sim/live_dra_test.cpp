// The what-if's replay and group plan on DRA nodes (docs/api.md, "What-if"): where kube-scheduler's
// DRA allocator hands GPUs out, each pod gets the first-fit set over what the pods before it left,
// never a GPU twice; claim pods of N GPUs likewise. The node: a DGX-1V DRA node whose slice lists
// GPUs 0 3 5 2 1 4 6 7 (NVLink pairs 0-3, 1-4 no, 5-2 no, 6-7: see tests/group/group_dra_test.cpp).
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "core/claims_as_gpus.h"
#include "policy/default_policy.h"
#include "sim/live_group_plan.h"
#include "sim/live_replay.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

using namespace gte;
using namespace gte::sim;
using testing::FixtureState;

namespace {

const auto kAlways = [] { return true; };

struct DraNode {
  testing::DraCluster cluster;
  NodeStateConstSharedPtr state;
  std::vector<LiveNode> nodes;

  explicit DraNode(const Policy& policy) {
    cluster.addSliceJson(testing::draDgx1Slice("dgx", {0, 3, 5, 2, 1, 4, 6, 7}));
    for (const char* claim : {"c0", "c1", "c2", "c3"})
      cluster.objects->add(testing::draGpuClaim(claim, 2));
    state = cluster.nodeState(
        testing::makeDgx1Volta(FixtureState().withName("dgx").withoutDevicePlugin()), policy);
    nodes.push_back({"dgx", state});
  }
};

std::vector<GpuMask> gpusOf(const std::vector<ReplayStep>& steps) {
  std::vector<GpuMask> out;
  for (const ReplayStep& step : steps)
    out.push_back(step.placement.gpus);
  return out;
}

constexpr GpuMask pair(int a, int b) {
  return (GpuMask{1} << a) | (GpuMask{1} << b);
}

// First-fit, 2 GPUs at a time down 0 3 5 2 1 4 6 7.
const std::vector<GpuMask> kFirstFit = {pair(0, 3), pair(2, 5), pair(1, 4), pair(6, 7)};

}  // namespace

TEST_CASE("what-if pods on a DRA node get the first-fit sets one after another", "[sim][dra]") {
  const Policy policy = defaultPolicy();
  DraNode node(policy);
  REQUIRE(node.state->allocator == GpuAllocator::kDra);
  SECTION("nvidia.com/gpu: 2 through DRA") {
    std::vector<ReplayPod> pods;
    for (const char* name : {"p0", "p1", "p2", "p3", "p4"}) {
      ReplayPod pod;
      pod.pod = SimPod(name, 0, 0, 2);
      pod.demand = simPodDemand(pod.pod, policy);
      pods.push_back(pod);
    }
    const LiveReplay replay = replayOnLiveStates(node.nodes, pods, policy, false, kAlways);
    REQUIRE(replay.steps.size() == 5);
    std::vector<GpuMask> placed = gpusOf(replay.steps);
    // The fifth finds no two GPUs left.
    CHECK(replay.steps[4].placement.node == -1);
    placed.pop_back();
    CHECK(placed == kFirstFit);
    CHECK(replay.steps[0].placement.weakest == LinkClass::kNvlink);
    CHECK(replay.steps[1].placement.weakest != LinkClass::kNvlink);
  }
  SECTION("claim pods of 2 GPUs") {
    std::vector<ReplayPod> pods;
    for (const std::string claim : {"c0", "c1", "c2", "c3"}) {
      ReplayPod pod;
      pod.pod = SimPod("p-" + claim, 0, 0, 0);
      auto demand = parsePodDemand(testing::makeClaimPod(pod.pod.name, "ml", {{"gpus", claim}}),
                                   policy, node.cluster.objects.get());
      REQUIRE(demand.ok());
      REQUIRE(claimsAsGpus(*demand));
      pod.demand = *demand;
      pods.push_back(pod);
    }
    const LiveReplay replay = replayOnLiveStates(node.nodes, pods, policy, false, kAlways);
    CHECK(gpusOf(replay.steps) == kFirstFit);
  }
  SECTION("a group of four 2-GPU pods: the plan's sets are the first-fit chain") {
    PodDemand demand;
    demand.gpus = 2;
    const std::vector<PodDemand> members(4, demand);
    const std::vector<GroupDomainIds> domains(1, {kNoDomain, kNoDomain, kNoDomain, kNoDomain});
    LiveGroupPlanInput input;
    input.nodes = node.nodes;
    input.domains = domains;
    input.group = "ml/job";
    input.levels = policy.groups.levels;
    input.members = members;
    const LiveGroupPlan planned = planGroupOnLiveStates(input, policy);
    REQUIRE(planned.plan.status == GroupPlanStatus::kPlanned);
    CHECK(gpusOf(planned.steps) == kFirstFit);
  }
}
