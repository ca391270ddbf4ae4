// checkFit on real machines: verdict (Fit / Unschedulable / Unresolvable) and the categorical
// reason text, table-driven.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "core/fit.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

NodeInfo cpuNode() {
  NodeInfo node;
  node.name = "cpu";
  return node;
}

NodeInfo malformedDgx1() {
  NodeInfo node = testing::makeDgx1Volta(FixtureState().withName("broken"));
  node.labels["gputopo.dev/nvl"] = "11";
  return node;
}

NodeInfo a100WorkedExample() {
  return testing::makeDgxA100(FixtureState()
                                  .withUsed("mm010000")
                                  .withMig("11000000")
                                  .withMigTokens(0, "10u02f03u24f")
                                  .withMigTokens(1, "00f01f02u03f04f05u06f"));
}

struct Case {
  const char* what;
  NodeInfo node;
  PodInfo pod;
  Verdict verdict;
  std::string reason;
};

const std::string kMinLink = "gputopo.dev/min-link";
const std::string kNuma = "gputopo.dev/numa";

TEST_CASE("filter verdicts and reasons", "[filter]") {
  const Policy policy = defaultPolicy();
  const std::vector<Case> cases = {
      {"NVLink quad on an empty DGX-1V", testing::makeDgx1Volta(),
       testing::makeGpuPod("p", 4, {{kMinLink, "nvlink"}}), Verdict::kFit, ""},
      // Free {0,3,4,6}: the device plugin must hand over all four and 0-6 is SYS. On the empty
      // node it would pick the quad {0,1,2,3}: preemption can help.
      {"only a broken quad is free", testing::makeDgx1Volta(FixtureState().withUsed("01101001")),
       testing::makeGpuPod("p", 4, {{kMinLink, "nvlink"}}), Verdict::kUnschedulable,
       "no 4 NVLink-connected free GPUs"},
      {"PCIe-only node never has NVLink", testing::make4xPcieL40s(),
       testing::makeGpuPod("p", 2, {{kMinLink, "nvlink"}}), Verdict::kUnresolvable,
       "no 2 NVLink-connected free GPUs"},
      {"NODE meets min-link node", testing::make4xPcieL40s(),
       testing::makeGpuPod("p", 2, {{kMinLink, "node"}}), Verdict::kFit, ""},
      {"NODE misses min-link pix", testing::make4xPcieL40s(),
       testing::makeGpuPod("p", 2, {{kMinLink, "pix"}}), Verdict::kUnresolvable,
       "no 2 free GPUs linked by PIX or better"},
      {"a single GPU has no weak link", testing::make4xPcieL40s(),
       testing::makeGpuPod("p", 1, {{kMinLink, "nvlink"}}), Verdict::kFit, ""},
      {"busy GPUs", testing::makeDgxA100(FixtureState().withUsed("11111100")),
       testing::makeGpuPod("p", 4), Verdict::kUnschedulable, "insufficient free GPUs"},
      {"more GPUs than the node has", testing::make4xPcieL40s(), testing::makeGpuPod("p", 5),
       Verdict::kUnresolvable, "node has fewer than 5 usable GPUs"},
      {"unhealthy GPUs do not count", testing::make4xPcieL40s(FixtureState().withHealth("1110")),
       testing::makeGpuPod("p", 4), Verdict::kUnresolvable, "node has fewer than 4 usable GPUs"},
      {"no GPUs at all", cpuNode(), testing::makeGpuPod("p", 1), Verdict::kUnresolvable,
       "node has no usable GPUs"},
      {"a pod without GPUs fits anywhere", cpuNode(), testing::makeGpuPod("p", 0), Verdict::kFit,
       ""},
      {"unknown links and min-link", testing::makeGfdNode("gfd", 8, "NVIDIA-A100-SXM4-80GB"),
       testing::makeGpuPod("p", 2, {{kMinLink, "phb"}}), Verdict::kUnresolvable,
       "topology unknown and pod requires min-link"},
      {"unknown links, 1 GPU, min-link", testing::makeGfdNode("gfd", 8, "NVIDIA-A100-SXM4-80GB"),
       testing::makeGpuPod("p", 1, {{kMinLink, "nvlink"}}), Verdict::kFit, ""},
      {"unknown NUMA and numa=single", testing::makeGfdNode("gfd", 8, "NVIDIA-A100-SXM4-80GB"),
       testing::makeGpuPod("p", 2, {{kNuma, "single"}}), Verdict::kUnresolvable,
       "topology unknown and pod requires a single NUMA node"},
      {"unknown links, plain multi-GPU pod",
       testing::makeGfdNode("gfd", 8, "NVIDIA-A100-SXM4-80GB"), testing::makeGpuPod("p", 4),
       Verdict::kFit, ""},
      {"malformed labels and min-link", malformedDgx1(),
       testing::makeGpuPod("p", 2, {{kMinLink, "nvlink"}}), Verdict::kUnresolvable,
       "topology labels malformed"},
      {"malformed labels, 1 GPU", malformedDgx1(), testing::makeGpuPod("p", 1), Verdict::kFit, ""},
      // NUMA 0 has free {0,1,3}, NUMA 1 has {4,6,7}; empty, each NUMA node holds 4.
      {"no NUMA node has 4 free", testing::makeDgx1Volta(FixtureState().withUsed("00100100")),
       testing::makeGpuPod("p", 4, {{kNuma, "single"}}), Verdict::kUnschedulable,
       "no single-NUMA set of 4 free GPUs"},
      {"no NUMA node has 5 GPUs", testing::makeDgx1Volta(),
       testing::makeGpuPod("p", 5, {{kNuma, "single"}}), Verdict::kUnresolvable,
       "no single-NUMA set of 5 free GPUs"},
      {"NUMA-aligned NVLink pair", testing::makeDgx1Volta(FixtureState().withUsed("00100100")),
       testing::makeGpuPod("p", 2, {{kNuma, "single"}, {kMinLink, "nvlink"}}), Verdict::kFit, ""},
      {"free static MIG instance", a100WorkedExample(), testing::makeMigPod("m", {{"1g.10gb", 1}}),
       Verdict::kFit, ""},
      {"six free 1g instances: one on GPU0, five on GPU1", a100WorkedExample(),
       testing::makeMigPod("m", {{"1g.10gb", 6}}), Verdict::kFit, ""},
      {"seven 1g: only six are free", a100WorkedExample(),
       testing::makeMigPod("m", {{"1g.10gb", 7}}), Verdict::kUnschedulable,
       "MIG profile 1g.10gb has no free placement"},
      {"the only 2g instance is used", a100WorkedExample(),
       testing::makeMigPod("m", {{"2g.20gb", 1}}), Verdict::kUnschedulable,
       "MIG profile 2g.20gb has no free placement"},
      {"no 4g instance exists (static MIG)", a100WorkedExample(),
       testing::makeMigPod("m", {{"4g.40gb", 1}}), Verdict::kUnresolvable,
       "MIG profile 4g.40gb has no free placement"},
      {"profile the product lacks", a100WorkedExample(), testing::makeMigPod("m", {{"5g.50gb", 1}}),
       Verdict::kUnresolvable, "MIG profile 5g.50gb is not offered by this GPU model"},
      {"MIG on a GPU model without a table", testing::makeDgx1Volta(),
       testing::makeMigPod("m", {{"1g.10gb", 1}}), Verdict::kUnresolvable,
       "GPU model has no MIG product table entry"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const Result<PodDemand> demand = parsePodDemand(c.pod, policy);
    REQUIRE(demand.ok());
    const auto state = buildNodeState(c.node, {}, policy);
    const FitOutcome outcome = checkFit(*demand, *state, policy);
    CHECK(outcome.verdict == c.verdict);
    CHECK(fitReasonText(outcome, *demand) == c.reason);
  }
}

TEST_CASE("the policy decides multi-GPU pods on unknown topology", "[filter]") {
  Policy policy = defaultPolicy();
  policy.allowMultiGpuOnUnknownTopology = false;
  const auto gfd = buildNodeState(testing::makeGfdNode("gfd", 8, "NVIDIA-L40S"), {}, policy);
  const Result<PodDemand> two = parsePodDemand(testing::makeGpuPod("p", 2), policy);
  const FitOutcome outcome = checkFit(*two, *gfd, policy);
  CHECK(outcome.verdict == Verdict::kUnresolvable);
  CHECK(fitReasonText(outcome, *two) ==
        "topology unknown and policy keeps multi-GPU pods off such nodes");
  const Result<PodDemand> one = parsePodDemand(testing::makeGpuPod("p", 1), policy);
  CHECK(checkFit(*one, *gfd, policy).fits());
}

TEST_CASE("MIG: same free-slice count, different answers", "[filter][mig]") {
  Policy policy = defaultPolicy();
  policy.dynamicMig = true;
  const Result<PodDemand> threeG =
      parsePodDemand(testing::makeMigPod("m", {{"3g.40gb", 1}}), policy);
  // Both GPUs have six free memory slices; only 1g@0 + 1g@1 leaves a legal 3g start (4).
  const auto apart = buildNodeState(
      testing::makeDgxA100(
          FixtureState().withUsed("m0000000").withMig("10000000").withMigTokens(0, "00u05u")),
      {}, policy);
  const auto adjacent = buildNodeState(
      testing::makeDgxA100(
          FixtureState().withUsed("m0000000").withMig("10000000").withMigTokens(0, "00u01u")),
      {}, policy);
  const FitOutcome refused = checkFit(*threeG, *apart, policy);
  CHECK(refused.verdict == Verdict::kUnschedulable);  // preempting the 1g pods would free it
  CHECK(fitReasonText(refused, *threeG) == "MIG profile 3g.40gb has no free placement");
  CHECK(checkFit(*threeG, *adjacent, policy).fits());
}

TEST_CASE("nodes whose MIG is known only by counts", "[filter][mig]") {
  const Policy policy = defaultPolicy();
  NodeInfo node;
  node.name = "counts";
  node.allocatable.set("nvidia.com/mig-1g.10gb", Quantity::fromUnits(2));
  NodeUsage usage;
  usage.mig = {{0, "1g.10gb", -1}};
  const auto state = buildNodeState(node, usage, policy);
  const Result<PodDemand> one = parsePodDemand(testing::makeMigPod("m", {{"1g.10gb", 1}}), policy);
  const Result<PodDemand> two = parsePodDemand(testing::makeMigPod("m", {{"1g.10gb", 2}}), policy);
  const Result<PodDemand> three =
      parsePodDemand(testing::makeMigPod("m", {{"1g.10gb", 3}}), policy);
  CHECK(checkFit(*one, *state, policy).fits());
  CHECK(checkFit(*two, *state, policy).verdict == Verdict::kUnschedulable);
  CHECK(checkFit(*three, *state, policy).verdict == Verdict::kUnresolvable);
}

}  // namespace
}  // namespace gte
