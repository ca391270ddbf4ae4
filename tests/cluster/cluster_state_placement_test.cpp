// What the cluster cache tells placement regret (ClusterStateOptions::onPodPlaced / onPodGone):
// a GPU pod seen bound after it was seen pending, nominated or reserved, with the GPUs it holds
// and how well they are linked; never the pods of a first list; every pod deleted. And the
// pending pods by size the pending-pods gauge reads.
#include <catch2/catch_test_macros.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "cluster_test_support.h"
#include "support/cluster_events_fixture.h"

namespace gte::testing {
namespace {

// Collects the events; the callbacks run outside the cache's lock, on the caller's thread.
struct Recorded {
  std::mutex mutex;
  std::vector<PodPlacement> placed;
  std::vector<std::string> gone;

  cluster::ClusterStateOptions options(ManualClock& clock) {
    cluster::ClusterStateOptions out = clockedOptions(clock);
    auto events = functionEvents();
    events->onPodPlaced = [this](const PodPlacement& p) {
      std::lock_guard lock(mutex);
      placed.push_back(p);
    };
    events->onPodGone = [this](const std::string& uid) {
      std::lock_guard lock(mutex);
      gone.push_back(uid);
    };
    out.events = events;
    return out;
  }
};

// DGX-1V whose labels show every GPU free (written long ago, so bound pods count).
NodeInfo dgx1v(const std::string& name) {
  NodeInfo node = makeDgx1Volta(FixtureState().withName(name));
  node.labels["gputopo.dev/gen"] = "1000";
  return node;
}

TEST_CASE("a pod seen pending then bound is reported placed with its GPUs", "[cluster][regret]") {
  ManualClock clock;
  Recorded events;
  cluster::ClusterState state(testPolicy(), events.options(clock));
  state.replaceNodes({dgx1v("dgx")});
  state.replacePods({});
  state.upsertPod(cluster::ObservedPod{gpuPod("p1", 2), std::nullopt});
  CHECK(events.placed.empty());
  state.upsertPod(bound("p1", 2, "dgx", clock.seconds()));
  REQUIRE(events.placed.size() == 1);
  const PodPlacement& placed = events.placed.front();
  CHECK(placed.uid == "p1");
  CHECK(placed.ns == "ml");
  CHECK(placed.name == "pod-p1");
  CHECK(placed.node == "dgx");
  CHECK(placed.gpus == 2);
  // Predicted as the device plugin's 2-GPU pick on the empty DGX-1V, {0,3} (an NV2 pair of its
  // best partition into pairs): 2 x 25 GB/s.
  CHECK(placed.indices == std::vector<int>{0, 3});
  CHECK(placed.got == SetQuality{LinkClass::kNvlink, 50});
  // A later update of the same binding is not a new placement.
  state.upsertPod(bound("p1", 2, "dgx", clock.seconds()));
  CHECK(events.placed.size() == 1);

  state.removePod("p1");
  CHECK(events.gone == std::vector<std::string>{"p1"});
}

TEST_CASE("the pods of a first list are not placements", "[cluster][regret]") {
  ManualClock clock;
  Recorded events;
  cluster::ClusterState state(testPolicy(), events.options(clock));
  state.replaceNodes({dgx1v("dgx")});
  state.replacePods({bound("old", 2, "dgx", 500)});
  CHECK(events.placed.empty());
  // A relist that no longer has it: gone.
  state.replacePods({});
  CHECK(events.gone == std::vector<std::string>{"old"});
}

TEST_CASE("a reservation the file backend marks bound is a placement", "[cluster][regret]") {
  ManualClock clock;
  Recorded events;
  cluster::ClusterState state(testPolicy(), events.options(clock));
  state.replaceNodes({dgx1v("dgx")});
  state.replacePods({});
  const PodInfo pod = gpuPod("p2", 4);
  REQUIRE(state.reserve(pod, "dgx").ok());
  CHECK(events.placed.empty());  // reserved, not bound yet
  state.markBound("p2");
  REQUIRE(events.placed.size() == 1);
  // The device plugin's 4-GPU pick on the empty DGX-1V is an NVLink quad; its weakest pair NV1.
  CHECK(events.placed.front().got == SetQuality{LinkClass::kNvlink, 25});
  CHECK(events.placed.front().indices.size() == 4);
}

TEST_CASE("pending GPU pods are counted by size as they come and go", "[cluster][regret]") {
  ManualClock clock;
  cluster::ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({dgx1v("dgx")});
  state.replacePods({cluster::ObservedPod{gpuPod("a", 8), std::nullopt},
                     cluster::ObservedPod{gpuPod("b", 8), std::nullopt},
                     cluster::ObservedPod{gpuPod("c", 1), std::nullopt}});
  CHECK(state.pendingByGpus()[8] == 2);
  CHECK(state.pendingByGpus()[1] == 1);
  state.upsertPod(bound("a", 8, "dgx", clock.seconds()));  // scheduled
  state.removePod("c");
  CHECK(state.pendingByGpus()[8] == 1);
  CHECK(state.pendingByGpus()[1] == 0);
  state.replacePods({});  // a relist without them
  CHECK(state.pendingByGpus()[8] == 0);
  CHECK(state.pendingCount() == 0);
}

// Replicas of shared GPUs (docs/sharing.md): a bind reserves no whole GPU on a time-sliced node,
// so it takes as many shared pods as kube-scheduler's resource fit allows (replicas), not as many
// as it has GPUs.
TEST_CASE("binds on a time-sliced node reserve no whole GPU", "[cluster][sharing]") {
  ManualClock clock;
  Recorded events;
  cluster::ClusterState state(testPolicy(), events.options(clock));
  NodeInfo node = dgx1v("sliced");
  node.labels.insert_or_assign("nvidia.com/gpu.sharing-strategy", std::string("time-slicing"));
  node.labels.insert_or_assign("nvidia.com/gpu.replicas", std::string("4"));
  state.replaceNodes({node});
  state.replacePods({});
  for (int i = 0; i < 12; ++i) {
    const auto reserved = state.reserve(gpuPod("r" + std::to_string(i), 1), "sliced");
    REQUIRE(reserved.ok());
    CHECK(reserved->gpus.empty());
  }
  CHECK(state.snapshot()->find("sliced")->freeCount == 8);
}

}  // namespace
}  // namespace gte::testing
