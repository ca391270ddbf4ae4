// Replicas of shared GPUs in the cluster cache (docs/sharing.md): binds reserve replicas, pods
// bound since the agent's last write count as tenants until its labels cover them, and no replica
// is given twice.
#include <catch2/catch_test_macros.hpp>

#include <string>

#include "cluster/cluster_state.h"
#include "cluster_test_support.h"
#include "core/gpu_sharing.h"

using gte::ErrorCode;
using gte::NodeInfo;
using gte::cluster::ClusterState;
using namespace gte::testing;

namespace {

// A DGX H100 time-sliced 4 ways whose agent wrote at `gen` with `tenants` per GPU.
NodeInfo slicedH100(const std::string& name, std::int64_t gen, const std::string& tenants) {
  NodeInfo node = h100(name, gen);
  node.labels.insert_or_assign(std::string(gte::kSharingStrategyLabel),
                               std::string("time-slicing"));
  node.labels.insert_or_assign(std::string(gte::kSharingReplicasLabel), std::string("4"));
  node.labels.insert_or_assign(std::string("gputopo.dev/tenants"), tenants);
  return node;
}

int freeReplicas(const ClusterState& state, const std::string& node) {
  const auto snapshot = state.snapshot();
  const gte::NodeState* found = snapshot->find(node);
  return found == nullptr ? -1 : found->freeReplicas;
}

}  // namespace

TEST_CASE("binds on a shared node reserve replicas and never give one twice") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  // 31 of 32 replicas held: one left, on GPU 7.
  state.replaceNodes({slicedH100("a", 1000, "44444443")});
  REQUIRE(freeReplicas(state, "a") == 1);
  auto first = state.reserve(gpuPod("p1", 1), "a");
  REQUIRE(first.ok());
  CHECK(first->replicas == 1);
  CHECK(first->gpus.empty());
  CHECK(freeReplicas(state, "a") == 0);
  CHECK(freeGpus(state, "a") == 8);  // replicas take no whole GPU
  auto second = state.reserve(gpuPod("p2", 1), "a");
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == ErrorCode::kFailedPrecondition);
  state.release("p1");
  CHECK(freeReplicas(state, "a") == 1);
  CHECK(state.reserve(gpuPod("p2", 1), "a").ok());
}

TEST_CASE("pods bound since the agent's write are tenants until its labels count them") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({slicedH100("a", 1000, "00000000")});
  state.upsertPod(bound("p1", 2, "a", 2000));
  state.upsertPod(bound("p2", 1, "a", 2001));
  {
    const auto snapshot = state.snapshot();
    const gte::NodeState* node = snapshot->find("a");
    REQUIRE(node != nullptr);
    CHECK(node->freeReplicas == 29);
    // Laid as the device plugin lays them: one replica on each of three GPUs.
    CHECK(node->tenantsOf(0) == 1);
    CHECK(node->tenantsOf(1) == 1);
    CHECK(node->tenantsOf(2) == 1);
    CHECK(node->tenantsOf(3) == 0);
  }
  // The agent's next write reports the three replicas: they are counted once, from the labels.
  state.upsertNode(slicedH100("a", 3000, "10010100"));
  CHECK(freeReplicas(state, "a") == 29);
  state.removePod("p1");
  state.removePod("p2");
  CHECK(freeReplicas(state, "a") == 29);  // until the agent's next pass says they are gone
}

TEST_CASE("a pod bound through the extender counts the replicas its annotation records") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({slicedH100("a", 1000, "03000000")});
  gte::cluster::ObservedPod web = bound("web", 2, "a", 2000);
  web.pod.annotations.insert_or_assign(std::string("gputopo.dev/gpus"), std::string("replicas:2"));
  state.upsertPod(std::move(web));
  CHECK(freeReplicas(state, "a") == 32 - 3 - 2);
}
