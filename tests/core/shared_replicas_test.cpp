// Replicas of shared GPUs as the node's state counts them (docs/sharing.md): the agent's tenants
// plus the replicas of pods placed since its last pass, laid on the GPUs as the device plugin's
// distributed allocation lays them; a shared node's capacity is its free replicas, for the fit
// check, the precomputed answers and the predicted allocation alike.
#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <string>
#include <vector>

#include "core/allocation.h"
#include "core/fit.h"
#include "core/gpu_sharing.h"
#include "core/plain_answers.h"
#include "core/pod_demand.h"
#include "core/predict_allocation.h"
#include "core/replica_landing.h"
#include "core/score_node.h"
#include "model/gpu_request.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

NodeInfo sliced(const std::string& replicas, const std::string& tenants) {
  return testing::makeSlicedDgxH100(replicas, tenants);
}

std::vector<int> tenantsOf(const NodeState& state) {
  std::vector<int> out;
  for (int gpu = 0; gpu < state.gpuCount; ++gpu)
    out.push_back(state.tenantsOf(gpu));
  return out;
}

PodDemand gpus(int k) {
  Result<PodDemand> demand = parsePodDemand(testing::makeGpuPod("p", k), defaultPolicy());
  REQUIRE(demand);
  return *demand;
}

TEST_CASE("pods placed since the agent's pass join its tenants as the device plugin lays them",
          "[core]") {
  const Policy policy = defaultPolicy();
  NodeUsage usage;
  usage.replicas = {1, 2};  // one pod of 1 replica, then one of 2
  const NodeStateConstSharedPtr state = buildNodeState(sliced("4", "33332200"), usage, policy);
  // The first pod's replica goes to GPU 6 (0 tenants, the lower index of the tie); the second
  // pod's to GPU 7 (0), then to the least used left (GPU 6, now 1).
  CHECK(tenantsOf(*state) == std::vector<int>{3, 3, 3, 3, 2, 2, 2, 1});
  // Replicas left: 1 on each of GPUs 0-3, 2 on 4-6, 3 on 7.
  CHECK(state->freeReplicas == 13);
  // A GPU with tenants stays free for more replicas: no whole GPU is taken.
  CHECK(state->freeCount == 8);
  // The labels alone: 16 free.
  CHECK(buildNodeState(sliced("4", "33332200"), {}, policy)->freeReplicas == 16);
}

TEST_CASE("a shared node fits as many replicas as it has free, whatever its GPU count", "[core]") {
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr full = buildNodeState(sliced("4", "44444443"), {}, policy);
  REQUIRE(full->freeReplicas == 1);
  CHECK(checkFit(gpus(1), *full, policy).fits());
  const FitOutcome two = checkFit(gpus(2), *full, policy);
  CHECK(two.reason == FitReason::kInsufficientFreeReplicas);
  CHECK(two.verdict == Verdict::kUnschedulable);  // its tenants' pods could be preempted
  CHECK(fitReasonText(two, gpus(2)) == "fewer than 2 free replicas of the node's shared GPUs");
  // More replicas than the node has in all (8 GPUs x 4): no eviction makes room.
  CHECK(checkFit(gpus(33), *full, policy).verdict == Verdict::kUnresolvable);
  // The precomputed answers are the fit check's.
  const PlainAnswers answers = precomputePlainAnswers(*full, policy);
  CHECK(answers.forGpus(2).reason == FitReason::kInsufficientFreeReplicas);
  CHECK(answers.forGpus(1).fit().fits());
  // Ten replicas on an empty 8-GPU board shared 4 ways: the plugin gives two GPUs two each.
  const NodeStateConstSharedPtr empty = buildNodeState(sliced("4", ""), {}, policy);
  CHECK(empty->freeReplicas == 32);
  CHECK(checkFit(gpus(10), *empty, policy).fits());
  const Allocation ten = predictAllocation(gpus(10), *empty);
  CHECK(ten.complete);
  CHECK(ten.gpus.empty());
  CHECK(ten.replicas == 10);
  CHECK_FALSE(predictAllocation(gpus(2), *full).complete);
}

TEST_CASE("replicas charged to a shared node become tenants, and released ones leave", "[core]") {
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr labels = buildNodeState(sliced("4", "22222222"), {}, policy);
  const Allocation two = predictAllocation(gpus(2), *labels);
  REQUIRE(two.complete);
  NodeUsage usage;
  addToUsage(usage, two);
  CHECK(usage.replicas == std::vector<int>{2});
  const NodeStateConstSharedPtr charged = rebuildNodeState(*labels, usage, policy);
  CHECK(tenantsOf(*charged) == std::vector<int>{3, 3, 2, 2, 2, 2, 2, 2});
  CHECK(charged->freeReplicas == labels->freeReplicas - 2);
  // spread ranks the charged node lower for the next pod: 7 replicas join 2 tenants each on the
  // labels alone (14), but 15 once the charged replicas count (the seventh joins a GPU with 3).
  CHECK(scoreTerms(gpus(7), *charged).packing == 1200 - 1200 * 15 / 21);
  CHECK(scoreTerms(gpus(7), *labels).packing == 1200 - 1200 * 14 / 21);
  // Preempt's what-if releases the replicas of victims the labels count: from the busiest GPUs.
  NodeUsage released;
  released.replicas = {3};
  const NodeStateConstSharedPtr freed = rebuildNodeState(*charged, usage, policy, released);
  CHECK(freed->freeReplicas == charged->freeReplicas + 3);
}

TEST_CASE("pods whose replicas cannot be named hold replicas on a shared node, not GPUs",
          "[core]") {
  const Policy policy = defaultPolicy();
  NodeUsage usage;
  usage.unknownGpus = 3;
  const NodeStateConstSharedPtr state = buildNodeState(sliced("4", ""), usage, policy);
  CHECK(state->freeCount == 8);
  CHECK(state->freeReplicas == 29);
  CHECK(tenantsOf(*state) == std::vector<int>{1, 1, 1, 0, 0, 0, 0, 0});
}

TEST_CASE("without a replica count the free replicas are the allocatable less every tenant",
          "[core]") {
  const Policy policy = defaultPolicy();
  NodeInfo node = sliced("", "11000000");
  node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(32));
  NodeUsage usage;
  usage.replicas = {1};
  const NodeStateConstSharedPtr state = buildNodeState(node, usage, policy);
  REQUIRE(state->sharesGpus);
  REQUIRE(state->sharing.replicas == 0);
  CHECK(state->freeReplicas == 29);
  // Neither a count nor an allocatable: no bound, kube-scheduler's resource fit alone decides.
  NodeInfo unknown = sliced("", "");
  unknown.allocatable = ResourceList{};
  const NodeStateConstSharedPtr unbounded = buildNodeState(unknown, usage, policy);
  CHECK(unbounded->freeReplicas == -1);
  CHECK(checkFit(gpus(40), *unbounded, policy).fits());
}

}  // namespace
}  // namespace gte

namespace gte {
namespace {

TEST_CASE("under pack a shared node with a free replica outranks every whole GPU on packing",
          "[core]") {
  Policy policy = defaultPolicy();
  policy.sharing.placement = SharedPlacement::kPack;
  Result<PodDemand> one = parsePodDemand(testing::makeGpuPod("p", 1), policy);
  REQUIRE(one);
  REQUIRE(one->sharedPlacement == SharedPlacement::kPack);
  // The emptiest shared board (no tenant) against whole boards at every fill.
  const NodeStateConstSharedPtr empty = buildNodeState(sliced("4", "00000000"), {}, policy);
  const int shared = scoreTerms(*one, *empty).packing;
  CHECK(shared == 600);
  for (const char* used : {"00000000", "11110000", "11111100", "11111110"}) {
    const NodeStateConstSharedPtr whole = buildNodeState(
        testing::makeDgxH100(FixtureState().withName("whole").withUsed(used)), {}, policy);
    CHECK(scoreTerms(*one, *whole).packing <= shared);
  }
  // One replica lands on one GPU: on a board whose NUMA nodes are known, its NUMA term is full.
  CHECK(scoreTerms(*one, *empty).numaLocality == 1200);
}

}  // namespace
}  // namespace gte

namespace gte {
namespace {

TEST_CASE("replicas land on the least-held GPUs; only the last level's tie is the plugin's",
          "[core]") {
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr state = buildNodeState(sliced("4", "33332200"), {}, policy);
  // Two replicas: GPUs 6 and 7, one each, certain.
  ReplicaLanding two = landReplicas(*state, 2);
  CHECK(two.certain[6] == 1);
  CHECK(two.certain[7] == 1);
  CHECK(two.undecided == 0);
  // Five: 6 and 7 to level 1, then 2 (and 4, 5 with them) to level 2: 6, 7 take two each and one
  // more goes to one of 4, 5, 6, 7.
  ReplicaLanding five = landReplicas(*state, 5);
  CHECK(five.certain[6] == 2);
  CHECK(five.certain[7] == 2);
  CHECK(five.undecided == 1);
  CHECK(five.tied == 0b11110000);
  // No GPU takes a replica past the count: 16 free, 17 asked leaves one unplaced.
  ReplicaLanding all = landReplicas(*state, 17);
  CHECK(all.unplaced == 1);
  CHECK(all.certain[0] == 1);
  CHECK(all.certain[6] == 4);
}

}  // namespace
}  // namespace gte

namespace gte {
namespace {

// A DGX H100 whose device plugin renames its replicas (renameByDefault): GFD's labels, and
// nvidia.com/gpu.shared: 32 allocatable instead of nvidia.com/gpu.
NodeInfo renamed() {
  NodeInfo node = sliced("4", "");
  node.allocatable = ResourceList{};
  node.allocatable.set(std::string(kSharedGpuResource), Quantity::fromUnits(32));
  return node;
}

PodDemand sharedGpus(int k, std::vector<std::pair<std::string, std::string>> annotations = {}) {
  PodInfo pod = testing::makeGpuPod("p", 0, annotations);
  pod.requests.set(std::string(kSharedGpuResource), Quantity::fromUnits(k));
  Result<PodDemand> demand = parsePodDemand(pod, defaultPolicy());
  REQUIRE(demand);
  return *demand;
}

TEST_CASE("replicas asked as nvidia.com/gpu.shared go only where the device plugin renames them",
          "[core]") {
  const Policy policy = defaultPolicy();
  const PodDemand two = sharedGpus(2);
  CHECK(two.gpus == 2);
  CHECK(two.sharedResource);
  CHECK(two.isolation == Isolation::kShared);
  const NodeStateConstSharedPtr onRenamed = buildNodeState(renamed(), {}, policy);
  REQUIRE(onRenamed->sharesGpus);
  CHECK(onRenamed->freeReplicas == 32);
  CHECK(checkFit(two, *onRenamed, policy).fits());
  CHECK(predictAllocation(two, *onRenamed).replicas == 2);
  // nvidia.com/gpu is not what that node advertises; nvidia.com/gpu.shared not what the others do.
  const FitOutcome plain = checkFit(gpus(1), *onRenamed, policy);
  CHECK(plain.reason == FitReason::kGpusRenamedShared);
  CHECK(plain.verdict == Verdict::kUnresolvable);
  CHECK(precomputePlainAnswers(*onRenamed, policy).forGpus(1).reason ==
        FitReason::kGpusRenamedShared);
  const NodeStateConstSharedPtr unrenamed = buildNodeState(sliced("4", ""), {}, policy);
  const FitOutcome missing = checkFit(two, *unrenamed, policy);
  CHECK(missing.reason == FitReason::kNoSharedResource);
  CHECK(fitReasonText(missing, two) == "node does not advertise nvidia.com/gpu.shared");
  // Without GFD's labels the renamed allocatable alone says the GPUs are shared.
  NodeInfo bare = renamed();
  bare.labels.erase(std::string(kSharingStrategyLabel));
  bare.labels.erase(std::string(kSharingReplicasLabel));
  const NodeStateConstSharedPtr unlabelled = buildNodeState(bare, {}, policy);
  CHECK(unlabelled->sharesGpus);
  CHECK(unlabelled->sharing.replicas == 4);
}

TEST_CASE("a pod asking nvidia.com/gpu.shared is shared whatever the default isolation", "[core]") {
  Policy exclusive = defaultPolicy();
  exclusive.sharing.defaultIsolation = Isolation::kExclusive;
  PodInfo pod = testing::makeGpuPod("p", 0);
  pod.requests.set(std::string(kSharedGpuResource), Quantity::fromUnits(1));
  Result<PodDemand> demand = parsePodDemand(pod, exclusive);
  REQUIRE(demand);
  CHECK(demand->isolation == Isolation::kShared);
  // Asking exclusive GPUs by annotation contradicts the resource; so does asking both resources.
  pod.annotations["gputopo.dev/isolation"] = "exclusive";
  const Result<PodDemand> contradiction = parsePodDemand(pod, exclusive);
  REQUIRE_FALSE(contradiction);
  CHECK(contradiction.error().message ==
        "annotation gputopo.dev/isolation: exclusive, but the pod asks for nvidia.com/gpu.shared "
        "(replicas of shared GPUs)");
  PodInfo both = testing::makeGpuPod("p", 1);
  both.requests.set(std::string(kSharedGpuResource), Quantity::fromUnits(1));
  CHECK_FALSE(parsePodDemand(both, defaultPolicy()));
}

}  // namespace
}  // namespace gte

namespace gte {
namespace {

TEST_CASE("without a replica count a renamed node's replicas are bounded by what it advertises",
          "[core]") {
  const Policy policy = defaultPolicy();
  // GFD's strategy label without its replica count; nvidia.com/gpu.shared: 32 allocatable.
  NodeInfo node = testing::makeSlicedDgxH100("", "44444443");
  node.allocatable = ResourceList{};
  node.allocatable.set(std::string(kSharedGpuResource), Quantity::fromUnits(32));
  const NodeStateConstSharedPtr state = buildNodeState(node, {}, policy);
  REQUIRE(state->sharing.replicas == 0);
  CHECK(state->freeReplicas == 1);
  PodInfo pod = testing::makeGpuPod("p", 0);
  pod.requests.set(std::string(kSharedGpuResource), Quantity::fromUnits(2));
  const Result<PodDemand> two = parsePodDemand(pod, policy);
  REQUIRE(two);
  const FitOutcome refused = checkFit(*two, *state, policy);
  CHECK(refused.reason == FitReason::kInsufficientFreeReplicas);
  // The emptied node advertises 32: its tenants' pods could make room.
  CHECK(refused.verdict == Verdict::kUnschedulable);
}

}  // namespace
}  // namespace gte
