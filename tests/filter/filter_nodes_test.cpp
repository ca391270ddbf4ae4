// One filter request over several nodes: every candidate gets a verdict in order, reason texts are
// shared across nodes (kube-scheduler groups identical messages), unresolved nodes and a pod that
// rejects itself are unresolvable everywhere.
#include "filter/filter_nodes.h"

#include <catch2/catch_test_macros.hpp>
#include <string>
#include <vector>

#include "core/node_state.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

const std::string kMinLink = "gputopo.dev/min-link";

struct Nodes {
  std::vector<NodeStateConstSharedPtr> states;
  std::vector<NodeCandidate> candidates;
};

Nodes resolve(const std::vector<NodeInfo>& nodes, const Policy& policy) {
  Nodes out;
  for (const NodeInfo& node : nodes) {
    out.states.push_back(buildNodeState(node, NodeUsage{}, policy));
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    out.candidates.push_back({nodes[i].name, out.states[i].get(), {}});
  }
  return out;
}

TEST_CASE("filterNodes: one verdict per node in order, each distinct reason formatted once") {
  const Policy policy = defaultPolicy();
  // Two DGX-1V with only a broken quad free ({0,3,4,6}: 0-6 is SYS), one empty DGX-1V, one node
  // with two GPUs.
  const std::string broken = "01101001";
  Nodes nodes = resolve({testing::makeDgx1Volta(FixtureState().withName("b1").withUsed(broken)),
                         testing::makeDgx1Volta(FixtureState().withName("free")),
                         testing::makeDgx1Volta(FixtureState().withName("b2").withUsed(broken)),
                         testing::makeGfdNode("small", 2, "NVIDIA-L40S")},
                        policy);
  nodes.candidates.push_back({"gone", nullptr, "node not in the extender's cache"});
  const Result<PodDemand> demand =
      parsePodDemand(testing::makeGpuPod("p", 4, {{kMinLink, "nvlink"}}), policy);
  REQUIRE(demand.ok());

  const FilterResult result = filterNodes(demand, nodes.candidates, policy);

  REQUIRE(result.nodes.size() == 5);
  CHECK(result.nodes[0].verdict == Verdict::kUnschedulable);
  CHECK(result.nodes[1].verdict == Verdict::kFit);
  CHECK(result.nodes[2].verdict == Verdict::kUnschedulable);
  CHECK(result.nodes[3].verdict == Verdict::kUnresolvable);  // fewer than 4 GPUs
  CHECK(result.nodes[4].verdict == Verdict::kUnresolvable);
  CHECK(result.nodes[0].reason == result.nodes[2].reason);
  CHECK(result.reasons[result.nodes[0].reason] == "no 4 NVLink-connected free GPUs");
  CHECK(result.reasons[result.nodes[3].reason] == "node has fewer than 4 usable GPUs");
  CHECK(result.reasons[result.nodes[4].reason] == "node not in the extender's cache");
  CHECK(result.reasons.size() == 3);
  CHECK(result.count(Verdict::kFit) == 1);
  CHECK(result.count(Verdict::kUnschedulable) == 2);
  CHECK(result.count(Verdict::kUnresolvable) == 2);
}

TEST_CASE("filterNodes: a pod whose own request is invalid is unresolvable on every node") {
  const Policy policy = defaultPolicy();
  Nodes nodes = resolve({testing::makeDgx1Volta(FixtureState().withName("a")),
                         testing::makeDgx1Volta(FixtureState().withName("b"))},
                        policy);
  const Result<PodDemand> demand =
      parsePodDemand(testing::makeGpuPod("p", 2, {{kMinLink, "fast"}}), policy);
  REQUIRE_FALSE(demand.ok());

  const FilterResult result = filterNodes(demand, nodes.candidates, policy);

  REQUIRE(result.nodes.size() == 2);
  CHECK(result.count(Verdict::kUnresolvable) == 2);
  REQUIRE(result.reasons.size() == 1);
  CHECK(result.reasons[0] == demand.error().message);
}

}  // namespace
}  // namespace gte
